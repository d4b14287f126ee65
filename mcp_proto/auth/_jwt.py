"""The JOSE pieces of authorization: base64url, compact JWS, PKCE, JWK thumbprints, client
assertions (RFC 7523) and DPoP proofs (RFC 9449); rules R8 and R20 of the notes.

Pure: the signature is made by an injected :class:`Signer` (the binding holds the key and a
crypto library), randomness (PKCE bytes, ``jti``) and the clock (``now``) are arguments.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

from ._urls import parse_auth_url

__all__ = [
    "CLIENT_ASSERTION_LIFETIME",
    "PKCE_MAX_RANDOM_BYTES",
    "PKCE_MIN_RANDOM_BYTES",
    "Signer",
    "b64url",
    "b64url_decode",
    "client_assertion",
    "decode_unverified",
    "dpop_proof",
    "encode_jwt",
    "jwk_thumbprint",
    "pkce_pair",
]

#: Seconds a client assertion is valid.  It is made right before the one token request it
#: authenticates, so a minute covers clock skew and a slow exchange, while a captured
#: assertion is soon useless (RFC 7523 section 3 wants a short ``exp``; rule R20).
CLIENT_ASSERTION_LIFETIME = 60.0

#: Random bytes of a PKCE verifier, at least: 256 bits (RFC 9700 section 4.8; rule R8), which
#: is 43 base64url characters, the shortest verifier RFC 7636 section 4.1 allows.
PKCE_MIN_RANDOM_BYTES = 32

#: Random bytes of a PKCE verifier, at most: 96 bytes are 128 base64url characters, the
#: longest verifier RFC 7636 section 4.1 allows.
PKCE_MAX_RANDOM_BYTES = 96

_B64URL = re.compile(r"[A-Za-z0-9_-]*")

#: Members of a JWK that only a private key has (RFC 7518 section 6): a public JWK sent in a
#: DPoP header must carry none of them.
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})

#: RFC 7638 section 3.2: the required members whose JSON is hashed, per key type.
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}


class Signer(Protocol):
    """Makes JOSE signatures with a private key it keeps to itself."""

    @property
    def alg(self) -> str:
        """The JWS ``alg`` (``"ES256"``...); never ``"none"``."""
        ...

    def public_jwk(self) -> dict[str, str]:
        """The public key as a JWK: never a private member such as ``d``."""
        ...

    def sign(self, data: bytes) -> bytes:
        """The JWS signature of ``data`` (for ES256 the 64 bytes ``r || s``)."""
        ...


def b64url(data: bytes) -> str:
    """``data`` in base64url without padding (RFC 7515 section 2).  Raises nothing."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """The bytes of unpadded base64url ``text``.  Raises ValueError for padding, any other
    character or an impossible length."""
    if not isinstance(text, str) or not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _json(value: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON.  Raises ValueError for what JSON cannot hold: NaN, a lone
    surrogate, a value that is not JSON (TypeError in ``json``), nesting deeper than the
    encoder's stack (RecursionError in ``json``)."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except RecursionError:
        raise ValueError("a JWT header or claims nested too deeply for JSON") from None
    except UnicodeEncodeError:  # a ValueError already; this one says what it is
        raise ValueError("a JWT header or claims string holds a lone surrogate") from None
    except TypeError as exc:
        raise ValueError(f"a JWT header or claims value is not JSON: {exc}") from None


def encode_jwt(header: dict[str, Any], claims: dict[str, Any], signer: Signer) -> str:
    """The compact JWS of ``claims`` signed by ``signer``; ``header`` (not modified) gets
    ``alg`` from the signer if it has none.  JSON is compact, keys in insertion order.
    Raises ValueError, and nothing else of its own, for the ``none`` algorithm, a header
    ``alg`` other than the signer's, values JSON cannot hold (NaN, lone surrogates, objects
    that are not JSON, nesting deeper than the encoder's stack), or a signer returning no
    signature bytes; what the signer raises passes through."""
    alg = signer.alg
    if not isinstance(alg, str) or not alg or alg.lower() == "none":
        raise ValueError("a JWT is never unsigned (alg 'none')")
    full = dict(header)
    full.setdefault("alg", alg)
    if full["alg"] != alg:
        shown = repr(full["alg"][:40]) if isinstance(full["alg"], str) else \
            f"a {type(full['alg']).__name__}"
        raise ValueError(f"the header alg {shown} is not the signer's {alg!r}")
    signing_input = f"{b64url(_json(full))}.{b64url(_json(claims))}"
    signature = signer.sign(signing_input.encode("ascii"))
    if not isinstance(signature, bytes) or not signature:
        raise ValueError("the signer returned no signature")
    return f"{signing_input}.{b64url(signature)}"


def decode_unverified(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(header, claims)`` of a compact JWS, the signature not checked (tests, diagnostics;
    never for trusting anything).  Raises ValueError, and nothing else, if it is not three
    base64url parts whose first two are UTF-8 JSON objects (nested no deeper than the
    interpreter can parse); the message names the part, never quotes the token."""
    if not isinstance(token, str):
        raise ValueError("a JWT is a string")
    parts = token.split(".")
    if len(parts) != 3:
        raise ValueError("a compact JWS has three parts")
    b64url_decode(parts[2])
    decoded: list[dict[str, Any]] = []
    for name, part in zip(("header", "claims"), parts[:2], strict=True):
        try:
            value = json.loads(b64url_decode(part).decode("utf-8"))
        except RecursionError:  # "[[[[...": deeper than the parser's stack
            raise ValueError(f"the JWS {name} is nested too deeply") from None
        except ValueError:  # not base64url, not UTF-8 (UnicodeDecodeError), not JSON
            raise ValueError(f"the JWS {name} is not base64url of UTF-8 JSON") from None
        if not isinstance(value, dict):
            raise ValueError("a JWS header and claims are JSON objects")
        decoded.append(value)
    return decoded[0], decoded[1]


def pkce_pair(random_bytes: bytes) -> tuple[str, str]:
    """``(code_verifier, code_challenge)`` for PKCE S256 (RFC 7636 section 4.1-4.2): the
    verifier is ``random_bytes`` in base64url, the challenge base64url SHA-256 of it.
    Raises ValueError unless ``random_bytes`` is bytes with :data:`PKCE_MIN_RANDOM_BYTES` to
    :data:`PKCE_MAX_RANDOM_BYTES` of them."""
    if not isinstance(random_bytes, bytes | bytearray):
        raise ValueError("PKCE needs random bytes")
    if not PKCE_MIN_RANDOM_BYTES <= len(random_bytes) <= PKCE_MAX_RANDOM_BYTES:
        raise ValueError(f"PKCE needs {PKCE_MIN_RANDOM_BYTES} to {PKCE_MAX_RANDOM_BYTES} "
                         f"random bytes, got {len(random_bytes)}")
    verifier = b64url(bytes(random_bytes))
    challenge = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
    return verifier, challenge


def jwk_thumbprint(jwk: Mapping[str, str]) -> str:
    """The RFC 7638 thumbprint of ``jwk`` (SHA-256, base64url): the JSON of its required
    members only, sorted, no whitespace.  Raises ValueError for a key type other than EC,
    RSA and OKP, or a required member missing or not a string."""
    kty = jwk.get("kty")
    members = _THUMBPRINT_MEMBERS.get(kty) if isinstance(kty, str) else None
    if members is None:
        raise ValueError(f"no thumbprint for key type {kty!r}")
    picked: dict[str, str] = {}
    for name in members:
        value = jwk.get(name)
        if not isinstance(value, str):
            raise ValueError(f"the {kty} JWK has no string {name!r}")
        picked[name] = value
    return b64url(hashlib.sha256(_json(picked)).digest())


def client_assertion(signer: Signer, *, client_id: str, audience: str, now: float, jti: str,
                     lifetime: float = CLIENT_ASSERTION_LIFETIME) -> str:
    """A private-key JWT client assertion (RFC 7523 section 3; RFC 7521 section 4.2):
    ``iss`` = ``sub`` = ``client_id``, ``aud`` = ``audience`` (the authorization server's
    issuer), ``iat``, ``exp`` = ``now + lifetime``, ``jti`` (fresh, from the caller's
    randomness); header ``typ`` ``JWT``.  Raises ValueError for an empty ``client_id``,
    ``audience`` or ``jti``, a ``lifetime`` that is not positive, or what
    :func:`encode_jwt` raises."""
    if not client_id or not audience or not jti:
        raise ValueError("a client assertion needs a client_id, an audience and a jti")
    if not lifetime > 0:
        raise ValueError("a client assertion's lifetime is positive")
    claims: dict[str, Any] = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": int(now),
        "exp": int(now + lifetime),
        "jti": jti,
    }
    return encode_jwt({"alg": signer.alg, "typ": "JWT"}, claims, signer)


def dpop_proof(signer: Signer, *, method: str, url: str, now: float, jti: str,
               nonce: str | None = None, access_token: str | None = None) -> str:
    """A DPoP proof (RFC 9449 section 4.2) for a ``method`` request to ``url``: header
    ``typ`` ``dpop+jwt``, ``alg``, ``jwk`` (the public key); claims ``jti``, ``htm``, ``htu``
    (``url`` without query and fragment, scheme and host lowercased, default port dropped),
    ``iat``, ``nonce`` if given and ``ath`` (base64url SHA-256 of ``access_token``) if
    given.  Raises ValueError for an empty ``method`` or ``jti``, a public JWK with a private
    member, a non-ASCII access token, or what :func:`encode_jwt` raises; and
    :class:`~mcp_proto._auth_errors.UnsafeUrl` if ``url`` does not parse."""
    if not method or not jti:
        raise ValueError("a DPoP proof needs a method and a jti")
    jwk = signer.public_jwk()
    leaked = _PRIVATE_MEMBERS & set(jwk)
    if leaked:
        raise ValueError(f"the DPoP public key carries private members {sorted(leaked)}")
    htu = parse_auth_url(url.partition("#")[0], what="the DPoP target URL").without_query
    claims: dict[str, Any] = {"jti": jti, "htm": method, "htu": htu, "iat": int(now)}
    if nonce is not None:
        claims["nonce"] = nonce
    if access_token is not None:
        claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
    return encode_jwt({"typ": "dpop+jwt", "alg": signer.alg, "jwk": dict(jwk)}, claims, signer)
