"""ES256 signing (ECDSA on P-256 with SHA-256) for private-key JWTs and DPoP proofs.

:class:`EcSigner` has the shape of the core's ``Signer`` protocol (``alg``, ``public_jwk()``,
``sign(data)``) and is built on the optional ``cryptography`` package, the ``auth`` extra.
The package is imported when a signer is made, not when this module is, so importing the
bindings never needs it.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey

__all__ = ["COORDINATE_SIZE", "MISSING_CRYPTOGRAPHY", "EcSigner"]

#: Bytes of one P-256 coordinate and of r and s in a signature (RFC 7518 section 3.4: the
#: JWS signature is r and s, each left-padded to 32 bytes; RFC 7518 section 6.2.1.2: ``x``
#: and ``y`` are the full 32 bytes even when they start with zeros).
COORDINATE_SIZE = 32

#: The message of the ``ImportError`` when the ``cryptography`` package is not installed.
MISSING_CRYPTOGRAPHY = ("ES256 signing needs the 'cryptography' package: "
                        "pip install 'mcp-proto[auth]'")

#: The curve ES256 is defined on, as ``cryptography`` names it.
_CURVE = "secp256r1"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _require_cryptography() -> None:
    """Raise the ``ImportError`` saying how to install ``cryptography`` when it is missing;
    after this the functions import what they use of it (lazily: the ``auth`` extra)."""
    try:
        import cryptography  # noqa: F401, PLC0415
    except ImportError:
        raise ImportError(MISSING_CRYPTOGRAPHY) from None


class EcSigner:
    """An ES256 key: signs with the private key, publishes the public one as a JWK.

    Make one with :meth:`generate` (a fresh key, e.g. one per DPoP flow) or :meth:`from_pem`
    (a registered ``private_key_jwt`` key).  ``repr`` names only the algorithm; the private
    key is never shown, and :meth:`public_jwk` has no ``d``.
    """

    alg: str = "ES256"

    __slots__ = ("_key",)

    def __init__(self, key: EllipticCurvePrivateKey) -> None:
        """Wrap a ``cryptography`` P-256 private key.  Raises ``ValueError`` for another key
        type or curve."""
        _require_cryptography()
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415

        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"ES256 needs an EC private key, not a {type(key).__name__}")
        if key.curve.name != _CURVE:
            raise ValueError(f"ES256 needs a P-256 key, not one on {key.curve.name}")
        self._key = key

    @classmethod
    def generate(cls) -> EcSigner:
        """A signer with a new random P-256 key.  Raises ``ImportError`` (with the install
        command) when ``cryptography`` is missing."""
        _require_cryptography()
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415

        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_pem(cls, pem: str | bytes, password: bytes | None = None) -> EcSigner:
        """A signer for a PEM private key: PKCS#8 (``BEGIN PRIVATE KEY``, ``BEGIN ENCRYPTED
        PRIVATE KEY``) or SEC1 (``BEGIN EC PRIVATE KEY``), on P-256.  Raises ``ValueError``
        for a PEM that cannot be read (malformed, wrong or missing ``password``), a key that
        is not EC or not on P-256 (the message names the type or curve, never key bytes),
        and ``ImportError`` when ``cryptography`` is missing."""
        _require_cryptography()
        from cryptography.exceptions import UnsupportedAlgorithm  # noqa: PLC0415
        from cryptography.hazmat.primitives.serialization import (  # noqa: PLC0415
            load_pem_private_key,
        )

        data = pem.encode("ascii", "replace") if isinstance(pem, str) else bytes(pem)
        try:
            key = load_pem_private_key(data, password=password)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise ValueError(f"cannot load the private key: {exc}") from None
        return cls(key)  # type: ignore[arg-type]  # checked in __init__

    def public_jwk(self) -> dict[str, str]:
        """The public key as a JWK (RFC 7518 section 6.2): ``kty``, ``crv``, ``x``, ``y``,
        coordinates base64url without padding (43 characters each).  Raises nothing."""
        numbers = self._key.public_key().public_numbers()
        return {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64url(numbers.x.to_bytes(COORDINATE_SIZE, "big")),
            "y": _b64url(numbers.y.to_bytes(COORDINATE_SIZE, "big")),
        }

    def sign(self, data: bytes) -> bytes:
        """The ES256 signature of ``data`` as a JWS wants it: r and s, 32 bytes each, big
        endian (64 bytes), not DER.  Raises nothing for bytes."""
        from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric.utils import (  # noqa: PLC0415
            decode_dss_signature,
        )

        der = self._key.sign(bytes(data), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return r.to_bytes(COORDINATE_SIZE, "big") + s.to_bytes(COORDINATE_SIZE, "big")

    def __repr__(self) -> str:
        return f"<EcSigner {self.alg}>"

    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("an EcSigner holds a private key and is not pickled")
