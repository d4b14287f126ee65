"""The JOSE pieces (rules R8, R20): checked against real ES256 signatures and RFC vectors."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto._auth_errors import UnsafeUrl
from mcp_proto.auth._jwt import (
    CLIENT_ASSERTION_LIFETIME,
    b64url,
    b64url_decode,
    client_assertion,
    decode_unverified,
    dpop_proof,
    encode_jwt,
    jwk_thumbprint,
    pkce_pair,
)


@dataclass
class Es256Signer:
    """A real ES256 signer, the way a binding would make one."""

    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    alg: str = "ES256"

    def public_jwk(self) -> dict[str, str]:
        numbers = self.key.public_key().public_numbers()
        return {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")),
                "y": b64url(numbers.y.to_bytes(32, "big"))}

    def sign(self, data: bytes) -> bytes:
        r, s = decode_dss_signature(self.key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def public_key_of(jwk: dict[str, Any]) -> ec.EllipticCurvePublicKey:
    assert jwk["kty"] == "EC" and jwk["crv"] == "P-256"
    x = int.from_bytes(b64url_decode(jwk["x"]), "big")
    y = int.from_bytes(b64url_decode(jwk["y"]), "big")
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()


def verify(token: str, key: ec.EllipticCurvePublicKey) -> None:
    """Raises InvalidSignature unless ``token`` is an ES256 JWS by ``key``."""
    signing_input, _, signature = token.rpartition(".")
    raw = b64url_decode(signature)
    assert len(raw) == 64
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key.verify(der, signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))


# -- base64url -------------------------------------------------------------------------------


@given(st.binary(max_size=100))
def test_b64url_round_trip(data: bytes) -> None:
    text = b64url(data)
    assert "=" not in text and "+" not in text and "/" not in text
    assert b64url_decode(text) == data


@pytest.mark.parametrize("text", ["a", "ab==", "a+b/", "ab c", "abcde", "é"])
def test_b64url_decode_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        b64url_decode(text)


# -- encode_jwt ------------------------------------------------------------------------------


def test_encode_jwt_signature_verifies() -> None:
    signer = Es256Signer()
    header: dict[str, Any] = {"typ": "JWT"}
    token = encode_jwt(header, {"sub": "x", "n": 1, "u": "é"}, signer)
    assert header == {"typ": "JWT"}  # not modified
    verify(token, signer.key.public_key())
    head, claims = decode_unverified(token)
    assert head == {"typ": "JWT", "alg": "ES256"}
    assert list(head) == ["typ", "alg"]
    assert claims == {"sub": "x", "n": 1, "u": "é"}
    first = token.split(".")[0]
    assert b64url_decode(first) == b'{"typ":"JWT","alg":"ES256"}'
    other = Es256Signer()
    with pytest.raises(InvalidSignature):
        verify(token, other.key.public_key())


def test_encode_jwt_refuses_none_and_mismatch() -> None:
    signer = Es256Signer()
    with pytest.raises(ValueError):
        encode_jwt({}, {}, Es256Signer(alg="none"))
    with pytest.raises(ValueError):
        encode_jwt({}, {}, Es256Signer(alg="NONE"))
    with pytest.raises(ValueError):
        encode_jwt({"alg": "none"}, {}, signer)
    with pytest.raises(ValueError):
        encode_jwt({"alg": "RS256"}, {}, signer)
    with pytest.raises(ValueError):
        encode_jwt({}, {"x": float("nan")}, signer)


def test_encode_jwt_refuses_empty_signature() -> None:
    class Empty(Es256Signer):
        def sign(self, data: bytes) -> bytes:
            return b""

    with pytest.raises(ValueError):
        encode_jwt({}, {}, Empty())


@pytest.mark.parametrize("token", ["", "a.b", "a.b.c.d", "e30.e30.!!", "W10.e30.", "e30.W10.",
                                   "bm90IGpzb24.e30."])
def test_decode_unverified_refuses(token: str) -> None:
    with pytest.raises(ValueError):
        decode_unverified(token)


def test_decode_unverified_empty_objects() -> None:
    assert decode_unverified("e30.e30.") == ({}, {})


# -- PKCE ------------------------------------------------------------------------------------


def test_pkce_rfc7636_appendix_b() -> None:
    octets = bytes([116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
                    22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121])
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert b64url_decode(verifier) == octets
    assert pkce_pair(octets) == (verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")


def test_pkce_bounds() -> None:
    assert len(pkce_pair(bytes(32))[0]) == 43
    assert len(pkce_pair(bytes(96))[0]) == 128
    with pytest.raises(ValueError):
        pkce_pair(bytes(31))
    with pytest.raises(ValueError):
        pkce_pair(bytes(97))
    with pytest.raises(ValueError):
        pkce_pair("x" * 40)  # type: ignore[arg-type]


@given(st.binary(min_size=32, max_size=96))
def test_pkce_properties(data: bytes) -> None:
    verifier, challenge = pkce_pair(data)
    assert 43 <= len(verifier) <= 128
    assert set(verifier) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert challenge == b64url(hashlib.sha256(verifier.encode()).digest())


# -- thumbprints -----------------------------------------------------------------------------

RFC7638_RSA = {
    "kty": "RSA",
    "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSo"
         "c_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YG"
         "jQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt"
         "-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDK"
         "gw",
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}


def test_thumbprint_rfc7638_vector() -> None:
    assert jwk_thumbprint(RFC7638_RSA) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_thumbprint_ignores_optional_members_and_order() -> None:
    jwk = Es256Signer().public_jwk()
    reordered = {"y": jwk["y"], "x": jwk["x"], "kty": "EC", "crv": "P-256", "kid": "k",
                 "use": "sig"}
    assert jwk_thumbprint(jwk) == jwk_thumbprint(reordered)
    expected = hashlib.sha256(
        f'{{"crv":"P-256","kty":"EC","x":"{jwk["x"]}","y":"{jwk["y"]}"}}'.encode()).digest()
    assert jwk_thumbprint(jwk) == b64url(expected)
    okp = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    # RFC 8037 appendix A.3
    assert jwk_thumbprint(okp) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"


@pytest.mark.parametrize("jwk", [{}, {"kty": "oct", "k": "x"}, {"kty": "EC", "crv": "P-256",
                                                                 "x": "a"},
                                 {"kty": "RSA", "n": "a", "e": 3}])
def test_thumbprint_refuses(jwk: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        jwk_thumbprint(jwk)


# -- client assertion ------------------------------------------------------------------------


def test_client_assertion() -> None:
    signer = Es256Signer()
    token = client_assertion(signer, client_id="client-1", audience="https://as.example",
                             now=1_700_000_000.7, jti="j1")
    verify(token, signer.key.public_key())
    header, claims = decode_unverified(token)
    assert header == {"alg": "ES256", "typ": "JWT"}
    assert claims == {"iss": "client-1", "sub": "client-1", "aud": "https://as.example",
                      "iat": 1_700_000_000, "exp": int(1_700_000_000.7 + CLIENT_ASSERTION_LIFETIME),
                      "jti": "j1"}
    token = client_assertion(signer, client_id="c", audience="a", now=100.0, jti="j",
                             lifetime=5.0)
    assert decode_unverified(token)[1]["exp"] == 105


@pytest.mark.parametrize("kwargs", [{"client_id": ""}, {"audience": ""}, {"jti": ""},
                                    {"lifetime": 0.0}, {"lifetime": -1.0}])
def test_client_assertion_refuses(kwargs: dict[str, Any]) -> None:
    args: dict[str, Any] = {"client_id": "c", "audience": "a", "now": 0.0, "jti": "j"}
    args.update(kwargs)
    with pytest.raises(ValueError):
        client_assertion(Es256Signer(), **args)


# -- DPoP ------------------------------------------------------------------------------------


def test_dpop_proof() -> None:
    signer = Es256Signer()
    token = dpop_proof(signer, method="POST", url="https://AS.example:443/token?x=1#f",
                       now=1_700_000_000.9, jti="id-1")
    header, claims = decode_unverified(token)
    assert header == {"typ": "dpop+jwt", "alg": "ES256", "jwk": signer.public_jwk()}
    assert "d" not in header["jwk"]
    verify(token, public_key_of(header["jwk"]))
    assert claims == {"jti": "id-1", "htm": "POST", "htu": "https://as.example/token",
                      "iat": 1_700_000_000}


def test_dpop_proof_nonce_and_ath() -> None:
    signer = Es256Signer()
    token = dpop_proof(signer, method="GET", url="http://localhost:3000/mcp", now=5.0,
                       jti="id-2", nonce="n-1",
                       access_token="Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")
    header, claims = decode_unverified(token)
    verify(token, public_key_of(header["jwk"]))
    # RFC 9449 section 7.1 example
    assert claims["ath"] == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
    assert claims["nonce"] == "n-1"
    assert claims["htu"] == "http://localhost:3000/mcp"
    assert list(claims) == ["jti", "htm", "htu", "iat", "nonce", "ath"]


def test_dpop_proof_refuses() -> None:
    class Leaky(Es256Signer):
        def public_jwk(self) -> dict[str, str]:
            return {**super().public_jwk(), "d": "secret"}

    with pytest.raises(ValueError, match="private"):
        dpop_proof(Leaky(), method="GET", url="https://a/", now=0, jti="j")
    with pytest.raises(ValueError):
        dpop_proof(Es256Signer(alg="none"), method="GET", url="https://a/", now=0, jti="j")
    with pytest.raises(ValueError):
        dpop_proof(Es256Signer(), method="GET", url="https://a/", now=0, jti="")
    with pytest.raises(ValueError):
        dpop_proof(Es256Signer(), method="GET", url="https://a/", now=0, jti="j",
                   access_token="tökén")
    with pytest.raises(UnsafeUrl):
        dpop_proof(Es256Signer(), method="GET", url="javascript:x", now=0, jti="j")
