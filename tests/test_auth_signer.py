"""ES256 signing: raw r||s signatures that verify, a public JWK, PEM loading, refusals."""

from __future__ import annotations

import base64
import pickle
import sys

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from mcp_proto_io.auth._signer import MISSING_CRYPTOGRAPHY, EcSigner


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_key_of(jwk: dict[str, str]) -> ec.EllipticCurvePublicKey:
    x = int.from_bytes(b64url_decode(jwk["x"]), "big")
    y = int.from_bytes(b64url_decode(jwk["y"]), "big")
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()


def pem(key: object, fmt: serialization.PrivateFormat,
        encryption: serialization.KeySerializationEncryption | None = None) -> bytes:
    return key.private_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, fmt, encryption or serialization.NoEncryption())


def verify(jwk: dict[str, str], data: bytes, signature: bytes) -> None:
    assert len(signature) == 64
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    public_key_of(jwk).verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))


def test_generated_signer_signs_verifiably() -> None:
    signer = EcSigner.generate()
    assert signer.alg == "ES256"
    jwk = signer.public_jwk()
    assert set(jwk) == {"kty", "crv", "x", "y"}
    assert jwk["kty"] == "EC" and jwk["crv"] == "P-256"
    assert len(jwk["x"]) == 43 and len(jwk["y"]) == 43
    assert "=" not in jwk["x"] + jwk["y"]
    data = b"header.payload"
    signature = signer.sign(data)
    verify(jwk, data, signature)
    with pytest.raises(InvalidSignature):
        verify(jwk, b"header.other", signature)
    assert signer.sign(data) != signature  # ECDSA is randomized


def test_short_coordinates_are_padded() -> None:
    # About 1 key in 128 has a coordinate with a leading zero byte; find one, boundedly.
    for _ in range(2000):
        signer = EcSigner.generate()
        numbers = signer._key.public_key().public_numbers()
        if numbers.x < 1 << 248 or numbers.y < 1 << 248:
            break
    else:  # pragma: no cover - probability about (127/128) ** 2000
        pytest.skip("no short coordinate found")
    jwk = signer.public_jwk()
    assert len(jwk["x"]) == 43 and len(jwk["y"]) == 43
    assert int.from_bytes(b64url_decode(jwk["x"]), "big") == numbers.x
    verify(jwk, b"d", signer.sign(b"d"))


@pytest.mark.parametrize("fmt", [serialization.PrivateFormat.PKCS8,
                                 serialization.PrivateFormat.TraditionalOpenSSL],
                         ids=["pkcs8", "sec1"])
def test_from_pem(fmt: serialization.PrivateFormat) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    data = pem(key, fmt)
    assert (b"BEGIN PRIVATE KEY" if fmt is serialization.PrivateFormat.PKCS8
            else b"BEGIN EC PRIVATE KEY") in data
    for source in (data, data.decode()):
        signer = EcSigner.from_pem(source)
        expected = key.public_key().public_numbers()
        assert public_key_of(signer.public_jwk()).public_numbers() == expected
        signature = signer.sign(b"x")
        r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
        key.public_key().verify(encode_dss_signature(r, s), b"x", ec.ECDSA(hashes.SHA256()))


def test_from_pem_encrypted() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    data = pem(key, serialization.PrivateFormat.PKCS8,
               serialization.BestAvailableEncryption(b"pw"))
    signer = EcSigner.from_pem(data, password=b"pw")
    assert public_key_of(signer.public_jwk()).public_numbers() == key.public_key().public_numbers()
    with pytest.raises(ValueError):
        EcSigner.from_pem(data, password=b"wrong")
    with pytest.raises(ValueError):
        EcSigner.from_pem(data)


@pytest.mark.parametrize("make", [
    lambda: ec.generate_private_key(ec.SECP384R1()),
    lambda: ec.generate_private_key(ec.SECP256K1()),
    lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    ed25519.Ed25519PrivateKey.generate,
], ids=["p384", "secp256k1", "rsa", "ed25519"])
def test_other_keys_refused(make: object) -> None:
    key = make()  # type: ignore[operator]
    with pytest.raises(ValueError, match=r"P-256|EC private key"):
        EcSigner.from_pem(pem(key, serialization.PrivateFormat.PKCS8))
    with pytest.raises(ValueError):
        EcSigner(key)


def test_garbage_refused() -> None:
    with pytest.raises(ValueError, match="cannot load"):
        EcSigner.from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    with pytest.raises(ValueError):
        EcSigner.from_pem(b"not a pem")


def test_repr_shows_no_key_material() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    signer = EcSigner(key)
    text = repr(signer) + str(signer)
    assert text == "<EcSigner ES256><EcSigner ES256>"
    d = key.private_numbers().private_value
    assert str(d) not in text and f"{d:x}" not in text
    jwk = signer.public_jwk()
    assert jwk["x"] not in text and "d" not in jwk
    with pytest.raises(TypeError):
        pickle.dumps(signer)


def test_missing_cryptography(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography", None)
    with pytest.raises(ImportError) as info:
        EcSigner.generate()
    assert str(info.value) == MISSING_CRYPTOGRAPHY
    assert "pip install 'mcp-proto[auth]'" in str(info.value)
    with pytest.raises(ImportError, match="cryptography"):
        EcSigner.from_pem(b"")
