"""Fuzz harness for the JOSE pieces of authorization (``mcp_proto.auth._jwt``).

``check(data)`` reads ``data`` two ways, chosen by its first byte:

- **raw** (a first byte below 0x80): ``data`` as the text of a token (latin-1, so every byte
  is one character) given to :func:`decode_unverified`, and as base64url to
  :func:`b64url_decode`;
- **structured** (otherwise): the rest of the data builds a token: three parts, each the
  base64url of a JSON value drawn from the data (objects, arrays, deep nesting, huge numbers,
  lone surrogates), of raw bytes (invalid UTF-8, ``[`` x 1000), or text that is not base64url
  (padding, ``+/``, a length of 4n+1); sometimes a fourth part or a missing one.  It also
  signs a drawn header and claims with a fake signer, makes a DPoP proof and a client
  assertion for drawn URLs and tokens, computes a JWK thumbprint and a PKCE pair.

Properties (any violation raises AssertionError):

- :func:`decode_unverified`, :func:`b64url_decode`, :func:`jwk_thumbprint` and
  :func:`pkce_pair` raise only ``ValueError`` (as documented); what ``decode_unverified``
  returns is two dicts; its error messages never hold the token's text (a marker in the
  claims never shows);
- round trips: ``b64url_decode(b64url(b)) == b``; ``decode_unverified(encode_jwt(h, c))``
  gives back ``h`` (with ``alg``) and ``c``; a decoded token re-encodes to the same header and
  claims; ``encode_jwt`` raises only ``ValueError`` (values JSON cannot hold);
- :func:`dpop_proof` raises only ``ValueError`` / ``UnsafeUrl``, never shows the access
  token (only its hash, ``ath``), its ``htu`` has no query or fragment; its messages hold
  neither the URL's query nor its user-info; :func:`client_assertion` has ``iss == sub``,
  ``aud``, and ``exp - iat`` the lifetime;
- ``jwk_thumbprint`` depends only on the required members; ``pkce_pair`` gives a verifier of
  43..128 characters whose S256 is the challenge.

Run: ``python fuzz/fuzz_jwt.py /tmp/fz/jwt fuzz/corpus/jwt -dict=fuzz/jwt.dict``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
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

#: A secret put into the claims, the access token and URLs' query and user-info.
SECRET = "S3CRET-m4rker"

# Tag -> (exception type that escapes, text in its message).  Pinned by xfail tests in
# tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)


class FakeSigner:
    """A signer that signs with SHA-256 (the harness checks shapes, not cryptography)."""

    def __init__(self, alg: str = "ES256", jwk: dict[str, str] | None = None) -> None:
        self.alg = alg
        self._jwk = jwk if jwk is not None else {"kty": "EC", "crv": "P-256", "x": "eA",
                                                  "y": "eQ"}

    def public_jwk(self) -> dict[str, str]:
        return dict(self._jwk)

    def sign(self, data: bytes) -> bytes:
        return hashlib.sha256(data).digest()


# -- drawing values ---------------------------------------------------------------------------

STRINGS = ("", "a", "ES256", "none", "JWT", "dpop+jwt", SECRET, "\u00e9", "\ud800", "\x00",
           "https://as.example/", "x" * 300)
KEYS = ("alg", "typ", "kid", "jwk", "iss", "sub", "aud", "exp", "iat", "jti", "nonce", "htu",
        "htm", "ath", "", "\u00e9", "\ud800")
NUMBERS: tuple[Any, ...] = (0, -1, 1.5, 2**53 + 1, 10**400, -(10**30), 1e308, True, False,
                            None)
#: Raw parts that are not JSON objects, or not even UTF-8.
RAW_PARTS = (b"[" * 1000, b"{" * 1000, b'{"a":' * 600, b"[]", b"null", b"\xff\xfe",
             b"\xed\xa0\x80", b'{"a":NaN}', b'{"a":1e400}', b"{}", b'{"a":1}{"b":2}',
             b"\xef\xbb\xbf{}", b" {} ")
NOT_B64 = ("a=", "ab==", "a+b/", "a", "abcde", "a.b", " ", "\u00e9", "ab\n")


def draw_json(ch: Choices, depth: int = 0) -> Any:
    k = ch.below(10)
    if k == 0 or depth > 4:
        return ch.pick(STRINGS)
    if k == 1:
        return ch.pick(NUMBERS)
    if k == 2:
        value: Any = ch.pick(STRINGS)
        for _ in range(ch.pick((10, 200, 990, 1500))):
            value = [value]
        return value
    if k <= 5:
        return [draw_json(ch, depth + 1) for _ in range(ch.below(4))]
    return draw_object(ch, depth + 1)


def draw_object(ch: Choices, depth: int = 0) -> dict[str, Any]:
    return {ch.pick(KEYS): draw_json(ch, depth + 1) for _ in range(ch.below(5))}


def _dumps(value: Any) -> bytes | None:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, RecursionError, UnicodeEncodeError):
        return None


def draw_part(ch: Choices) -> str:
    k = ch.below(8)
    if k == 0:
        return b64url(ch.pick(RAW_PARTS))
    if k == 1:
        return ch.pick(NOT_B64)
    if k == 2:
        return b64url(ch.take(ch.below(40)))
    value = draw_object(ch) if k <= 5 else draw_json(ch)
    encoded = _dumps(value)
    return b64url(encoded if encoded is not None else b"{}")


def draw_token(ch: Choices) -> str:
    parts = [draw_part(ch) for _ in range(3)]
    k = ch.below(8)
    if k == 0:
        parts.append(draw_part(ch))
    elif k == 1:
        parts.pop()
    elif k == 2:
        parts[2] = ""
    return ".".join(parts)


URLS = ("https://rs.example/mcp", "https://rs.example/mcp?token=" + SECRET,
        f"https://u:{SECRET}@rs.example/mcp", "http://127.0.0.1:8080/x#frag",
        "HTTPS://RS.Example:443/a?b=c#d", "ftp://rs.example/", "https://[::1]/p",
        "https://rs.example:99999/", "", "https://rs.example/\u00e9")


# -- the properties ---------------------------------------------------------------------------


def _no_secret(exc: BaseException, what: str) -> None:
    assert SECRET not in str(exc), f"{what}: the message shows a secret: {exc}"[:300]


def check_decode(token: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """decode_unverified raises only ValueError; a decoded token re-encodes to itself."""
    try:
        header, claims = decode_unverified(token)
    except ValueError as exc:
        _no_secret(exc, "decode_unverified")
        return None
    except Exception as exc:
        escaped("decode_unverified", exc)
    assert type(header) is dict and type(claims) is dict, "decode_unverified shape"
    alg = header.get("alg")
    if isinstance(alg, str) and alg and alg.lower() != "none":
        try:
            again = encode_jwt(header, claims, FakeSigner(alg))
        except ValueError:  # NaN, a lone surrogate: values JSON cannot hold
            return header, claims
        except Exception as exc:
            escaped("encode_jwt of a decoded token", exc)
        assert decode_unverified(again) == (header, claims), "re-encoding changed the token"
    return header, claims


def check_b64(text: str, raw: bytes) -> None:
    assert b64url_decode(b64url(raw)) == raw, f"b64url round trip of {raw[:40]!r}"
    try:
        decoded = b64url_decode(text)
    except ValueError:
        return
    except Exception as exc:
        escaped("b64url_decode", exc)
    assert type(decoded) is bytes and len(decoded) == len(text) * 3 // 4, "b64url_decode"


def check_encode(ch: Choices) -> None:
    header = draw_object(ch)
    claims = draw_object(ch)
    alg = ch.pick(("ES256", "RS256", "none", "", "NONE"))
    signer = FakeSigner(alg)
    try:
        token = encode_jwt(header, claims, signer)
    except ValueError:
        return
    except Exception as exc:
        escaped("encode_jwt", exc)
    assert alg and alg.lower() != "none", "encode_jwt signed with alg none"
    got_header, got_claims = decode_unverified(token)
    assert got_header == {**header, "alg": header.get("alg", alg)}, "header round trip"
    assert got_claims == claims, "claims round trip"
    assert "alg" not in header or header["alg"] == alg, "a header alg other than the signer's"


def check_dpop(ch: Choices) -> None:
    url = ch.pick(URLS)
    token = ch.pick((None, SECRET, "t\u00e9", ""))
    nonce = ch.pick((None, "n", ""))
    jwk = ch.pick(({"kty": "EC", "crv": "P-256", "x": "a", "y": "b"},
                   {"kty": "EC", "crv": "P-256", "x": "a", "y": "b", "d": SECRET}))
    try:
        proof = dpop_proof(FakeSigner(jwk=jwk), method=ch.pick(("POST", "GET", "")), url=url,
                           now=float(ch.below(2**16)), jti=ch.pick(("j", "")), nonce=nonce,
                           access_token=token)
    except (ValueError, UnsafeUrl) as exc:
        _no_secret(exc, "dpop_proof")
        return
    except Exception as exc:
        escaped("dpop_proof", exc)
    header, claims = decode_unverified(proof)
    assert SECRET not in json.dumps(header) + json.dumps(claims), "the proof shows a secret"
    assert header.get("typ") == "dpop+jwt" and "d" not in header.get("jwk", {}), header
    htu = claims["htu"]
    assert "?" not in htu and "#" not in htu and "@" not in htu, f"htu {htu!r}"
    if token is not None:
        want = b64url(hashlib.sha256(token.encode("ascii")).digest())
        assert claims.get("ath") == want, "ath is not the token's hash"
    if nonce is not None:
        assert claims.get("nonce") == nonce


def check_assertion(ch: Choices) -> None:
    client_id = ch.pick(("c", "", SECRET[:3]))
    audience = ch.pick(("https://as.example/", ""))
    lifetime = ch.pick((CLIENT_ASSERTION_LIFETIME, 0.0, -1.0, 5.0))
    now = float(ch.below(2**20))
    try:
        jwt = client_assertion(FakeSigner(), client_id=client_id, audience=audience, now=now,
                               jti=ch.pick(("j", "")), lifetime=lifetime)
    except ValueError:
        return
    except Exception as exc:
        escaped("client_assertion", exc)
    _, claims = decode_unverified(jwt)
    assert claims["iss"] == claims["sub"] == client_id and claims["aud"] == audience
    assert claims["exp"] - claims["iat"] == int(now + lifetime) - int(now), claims


def check_thumbprint(ch: Choices) -> None:
    jwk: dict[str, Any] = {}
    for _ in range(ch.below(7)):
        jwk[ch.pick(("kty", "crv", "x", "y", "n", "e", "d", "kid", "alg"))] = ch.pick(
            ("EC", "RSA", "OKP", "P-256", "AQAB", "a", 5, None, "\ud800"))
    try:
        first = jwk_thumbprint(jwk)
    except ValueError:
        return
    except Exception as exc:
        escaped("jwk_thumbprint", exc)
    extra = {**jwk, "kid": "other", "use": "sig"}
    assert jwk_thumbprint(extra) == first, "the thumbprint depends on optional members"


def check_pkce(ch: Choices) -> None:
    raw = ch.take(ch.pick((0, 31, 32, 48, 96, 97)))
    try:
        verifier, challenge = pkce_pair(raw)
    except ValueError:
        return
    except Exception as exc:
        escaped("pkce_pair", exc)
    assert 43 <= len(verifier) <= 128, len(verifier)
    assert challenge == b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def check(data: bytes) -> None:
    if not data or data[0] < 0x80:
        text = data.decode("latin-1")
        check_decode(text)
        check_b64(text, data)
        check_decode(base64.urlsafe_b64encode(data).decode("ascii"))
        return
    ch = Choices(data[1:])
    token = draw_token(ch)
    check_decode(token)
    check_b64(token.partition(".")[0], ch.take(8))
    check_encode(ch)
    check_dpop(ch)
    check_assertion(ch)
    check_thumbprint(ch)
    check_pkce(ch)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
