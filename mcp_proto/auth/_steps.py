"""The pure steps of the authorization flow: what a request carries and what an answer
means, each a function of its input.  :class:`OAuthFlow` decides when each one runs.

- :func:`scope_tokens` / :func:`scope_union`: scope strings (RFC 6749 section 3.3).
- :func:`registration_body` / :func:`parse_registration`: dynamic client registration
  (RFC 7591), the answer checked before any browser opens (:func:`redirect_uri_registered`:
  the redirect URI about to be sent is one the server registered).
- :func:`check_callback`: the authorization response, checked in the order that keeps an
  attacker's answer from being acted on (redirect URI, RFC 9207 ``iss``, ``state``, then
  ``error``, then ``code``).
- :func:`client_authentication`: ``client_secret_basic``, ``client_secret_post``,
  ``private_key_jwt`` or ``none`` at the token endpoint.
- :func:`parse_tokens`: a token answer, refused unless it is a usable Bearer (or DPoP) token.
"""

from __future__ import annotations

import hmac
import math
import re
from base64 import b64encode
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from .._auth_errors import AuthorizationDenied, CallbackRejected, RegistrationError, TokenError
from ._config import (
    HEADER_SAFE,
    MAX_TOKEN_LIFETIME,
    MIN_TOKEN_LIFETIME,
    AuthConfig,
    Tokens,
    sendable,
)
from ._exchange import AuthResponse
from ._jwt import Signer, client_assertion
from ._urls import MAX_SHOWN_URL, safe_url

__all__ = [
    "ASSERTION_TYPE",
    "MAX_CALLBACK_URL",
    "MAX_SHOWN_URL",
    "MAX_SHOWN_VALUES",
    "brief",
    "check_callback",
    "client_authentication",
    "oauth_error",
    "parse_registration",
    "parse_tokens",
    "redirect_uri_registered",
    "registration_body",
    "safe_url",
    "scope_tokens",
    "scope_union",
    "shown_urls",
    "str_list",
]

#: Characters of a callback URL accepted (rule R12): ``code``, ``state``, ``iss`` and an
#: error description fit many times over; a pasted or redirected URL longer than this is
#: refused.
MAX_CALLBACK_URL = 8 * 1024

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

_SCOPE_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F)) - {'"', "\\"}
_REGISTERED_METHODS = ("none", "client_secret_basic", "client_secret_post")


def scope_tokens(text: str | None) -> list[str]:
    """Scope tokens (RFC 6749 section 3.3), in order, without repeats or bad characters."""
    out: list[str] = []
    for token in (text or "").split(" "):
        if token and all(c in _SCOPE_CHARS for c in token) and token not in out:
            out.append(token)
    return out


def scope_union(*groups: Sequence[str]) -> list[str]:
    """The tokens of every group, in first-seen order (step-up: SEP-2350's union)."""
    out: list[str] = []
    for group in groups:
        for token in group:
            if token not in out:
                out.append(token)
    return out


def str_list(value: object) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


#: Values of a list (redirect URIs, authorization servers) quoted in one message: enough to
#: see what the server said, and a 64 KiB list does not become a 64 KiB message.
MAX_SHOWN_VALUES = 3

_JSON_TYPES = ((bool, "boolean"), (int, "number"), (float, "number"), (list, "array"),
               (dict, "object"))


def brief(value: object, limit: int = 60) -> str:
    """A value of a server's answer for a message: a string quoted and cut to ``limit``
    characters, anything else named by its JSON type only (its text may be huge, nested
    past what ``repr`` can print, or hold a secret).  Raises nothing."""
    if isinstance(value, str):
        return repr(value[:limit])
    if value is None:
        return "null"
    name = next((n for t, n in _JSON_TYPES if isinstance(value, t)), type(value).__name__)
    return f"a JSON {name}"


def shown_urls(urls: Sequence[str]) -> str:
    """At most :data:`MAX_SHOWN_VALUES` of ``urls`` through :func:`safe_url`, and how many
    more there are.  Raises nothing."""
    if not urls:
        return "none"
    shown = ", ".join(safe_url(u) for u in urls[:MAX_SHOWN_VALUES])
    more = len(urls) - MAX_SHOWN_VALUES
    return shown + (f" and {more} more" if more > 0 else "")


#: A loopback redirect URI with a port: ``http://`` (as registered: lowercase), the host
#: 127.0.0.1, [::1] or localhost, and the port; what follows is compared exactly.
_LOOPBACK_WITH_PORT = re.compile(r"(http://(?:127\.0\.0\.1|\[::1\]|localhost)):[0-9]{1,5}(?=[/?]|$)")


def redirect_uri_registered(redirect_uri: str, registered: Sequence[str]) -> bool:
    """Whether an authorization request sending ``redirect_uri`` matches one of the
    ``registered`` redirect URIs, as an authorization server compares them: simple string
    comparison (RFC 6749 section 3.1.2.3, OAuth 2.1 section 2.3.1, RFC 9700 section
    4.1.3: no case folding, no trailing-slash or default-port leniency), except that a
    loopback ``http`` URI registered *without* a port matches the same URI with any port
    (RFC 8252 section 7.3: the port is chosen when the request is made).  A registered
    loopback URI with another port than ours is no match: a server that compares exactly
    would refuse, and the user would be left on its error page.  Raises nothing."""
    if redirect_uri in registered:
        return True
    ported = _LOOPBACK_WITH_PORT.match(redirect_uri)
    if ported is None:
        return False
    portless = ported.group(1) + redirect_uri[ported.end():]
    return portless in registered


def oauth_error(response: AuthResponse) -> tuple[str | None, str | None]:
    """The ``error`` and ``error_description`` of an OAuth error answer, shortened."""
    body = response.json_object() or {}
    error = body.get("error")
    description = body.get("error_description")
    return (error[:200] if isinstance(error, str) else None,
            description[:300] if isinstance(description, str) else None)


def registration_body(config: AuthConfig, meta: dict[str, Any],
                      scope: Sequence[str] = ()) -> dict[str, Any]:
    """The dynamic registration request: a public client (``none``) when the authorization
    server allows it, else the first secret method it lists; ``application_type`` ``native``
    for a loopback redirect URI (SEP-837), ``refresh_token`` among the grants, and the
    ``scope`` about to be asked for (servers that register a client for the scopes it names
    refuse any other at the authorization endpoint)."""
    supported = str_list(meta.get("token_endpoint_auth_methods_supported"))
    method = "none"
    if supported is not None and "none" not in supported:
        method = next((m for m in ("client_secret_basic", "client_secret_post")
                       if m in supported), "client_secret_basic")
    redirect = config.redirect_uri
    app = config.application_type or (
        "native" if urlsplit(redirect).hostname in ("127.0.0.1", "::1", "localhost")
        else "web")
    body: dict[str, Any] = {"client_name": config.client_name, "redirect_uris": [redirect],
                            "grant_types": ["authorization_code", "refresh_token"],
                            "response_types": ["code"], "token_endpoint_auth_method": method,
                            "application_type": app}
    if scope:
        body["scope"] = " ".join(scope)
    return body


def parse_registration(response: AuthResponse, url: str, redirect_uri: str,
                       requested: str = "none") -> dict[str, Any]:
    """The client record of a registration answer (RFC 7591 section 3.2.1).  Raises
    :class:`RegistrationError` for a refusal, no ``client_id``, a ``client_id`` or
    ``client_secret`` that could not be sent (see :func:`~._config.sendable`), a
    method this client does not implement, a secret method without a secret, or
    ``redirect_uris`` that do not hold ``redirect_uri`` (see :func:`redirect_uri_registered`;
    an answer without ``redirect_uris`` registered what was asked).  ``requested`` is the
    method asked for (what an answer that names none assigned).  Messages never quote the
    secret.

    The record keeps ``redirect_uri`` (what was sent) and ``redirect_uris`` (what the
    server registered that fits it: the same URI, or its portless loopback form), so a later
    run with another redirect URI knows whether this registration still fits it."""
    doc = response.json_object()
    where = safe_url(url)
    if response.status not in (200, 201) or doc is None:
        error, description = oauth_error(response)
        raise RegistrationError(f"registration at {where} refused: HTTP {response.status}"
                                + (f" {error}" if error else "")
                                + (f": {description}" if description else ""),
                                error, description)
    client_id = doc.get("client_id")
    secret = doc.get("client_secret")
    # Left out: what was asked for stands (RFC 7591 section 3.2.1); with a secret and
    # nothing asked, RFC 7591 section 2's default.
    method = doc.get("token_endpoint_auth_method",
                     "client_secret_basic" if requested == "none" and secret else requested)
    if not isinstance(client_id, str) or not client_id:
        raise RegistrationError(f"registration at {where} gave no client_id")
    if not sendable(client_id):
        raise RegistrationError(f"registration at {where} gave a client_id with control "
                                "characters or over 16 KiB (RFC 6749 appendix A.1)")
    if method not in _REGISTERED_METHODS:
        raise RegistrationError(f"registration at {where} assigned the unsupported "
                                f"token_endpoint_auth_method {brief(method)}")
    if method != "none" and not (isinstance(secret, str) and secret):
        raise RegistrationError(f"registration at {where} assigned {method} but no "
                                "client_secret")
    if method != "none" and not sendable(secret):
        raise RegistrationError(f"registration at {where} gave a client_secret with control "
                                "characters or over 16 KiB (RFC 6749 appendix A.2)")
    registered = [redirect_uri]
    if "redirect_uris" in doc:
        answered = str_list(doc["redirect_uris"])
        if answered is None:
            raise RegistrationError(f"registration at {where} answered redirect_uris "
                                    f"{brief(doc['redirect_uris'])}, not a list of strings; "
                                    "no browser was opened")
        if not redirect_uri_registered(redirect_uri, answered):
            raise RegistrationError(
                f"registration at {where} registered the redirect URIs "
                f"{shown_urls(answered)}, not {safe_url(redirect_uri)}, which this client "
                "sends: the authorization server would refuse the authorization "
                "(redirect URIs are compared as exact strings, RFC 6749 section 3.1.2.3); "
                "no browser was opened")
        # Only the ones this client can use: ours, or its portless form (RFC 8252).  The
        # rest would only grow the stored record (a store keeps 64 KiB).
        registered = [u for u in answered if redirect_uri_registered(redirect_uri, [u])]
    return {"client_id": client_id, "client_secret": secret if method != "none" else None,
            "method": method, "via": "dcr", "redirect_uri": redirect_uri,
            "redirect_uris": registered}


def check_callback(url: str, *, redirect_uri: str, state: str, issuer: str | None,
                   iss_advertised: bool) -> str:
    """The code in a callback URL.  Raises :class:`CallbackRejected` for another redirect
    URI, a fragment response, a repeated parameter, an ``iss`` that is not ``issuer`` (simple
    string comparison, RFC 9207) or missing though advertised, a wrong or missing ``state``,
    or no code (or one that could not be sent, :func:`~._config.sendable`);
    :class:`AuthorizationDenied` for an error answer (shown only once ``iss`` and ``state``
    passed).  Raises nothing else, whatever ``url`` holds."""
    if not isinstance(url, str) or len(url) > MAX_CALLBACK_URL:
        raise CallbackRejected("the callback URL is not a string of at most 8 KiB")
    try:
        got = urlsplit(url.strip())
        want = urlsplit(redirect_uri)
        got_port, want_port = got.port, want.port
    except ValueError:
        raise CallbackRejected("the callback URL is malformed") from None
    loopback = (want.hostname or "").lower() in ("127.0.0.1", "::1", "localhost")
    same = ((got.scheme.lower(), (got.hostname or "").lower(), got.path or "/")
            == (want.scheme.lower(), (want.hostname or "").lower(), want.path or "/")
            # RFC 8252 section 7.3: a loopback redirect URI registered without a port
            # accepts any port (and only a loopback one).
            and (got_port == want_port or (loopback and want_port is None)))
    if not same:
        raise CallbackRejected(f"the callback is for {safe_url(url)}, not the redirect URI "
                               f"{safe_url(redirect_uri)}")
    if got.fragment:
        raise CallbackRejected("the authorization response came in a fragment; only the "
                               "query is accepted")
    pairs = parse_qsl(got.query, keep_blank_values=True)
    names = [k for k, _ in pairs]
    if len(set(names)) != len(names):
        raise CallbackRejected("the callback repeats a parameter")
    query = dict(pairs)
    iss = query.get("iss")
    if iss is not None and iss != issuer:
        raise CallbackRejected("the callback's iss is not the authorization server's issuer "
                               f"{issuer!r} (RFC 9207 mix-up check); no token was requested")
    if iss is None and iss_advertised:
        raise CallbackRejected("the authorization server promises iss in its responses "
                               "(RFC 9207) and this callback has none; no token was "
                               "requested")
    got_state = query.get("state")
    # surrogatepass: a callback a host's handler built may hold a lone surrogate, and a
    # state that is not ours must be refused, not raise UnicodeEncodeError.
    if got_state is None or not hmac.compare_digest(got_state.encode("utf-8", "surrogatepass"),
                                                    state.encode("utf-8", "surrogatepass")):
        raise CallbackRejected("the callback's state is missing or not the one sent; no "
                               "token was requested")
    if "error" in query:
        error = query["error"][:200]
        description = query.get("error_description", "")[:300]
        raise AuthorizationDenied(f"the authorization server answered {error}"
                                  + (f": {description}" if description else ""),
                                  error, description or None)
    code = query.get("code")
    if not code:
        raise CallbackRejected("the callback has no code")
    if not sendable(code):  # it goes into the token request's form
        raise CallbackRejected("the callback's code has control characters or is over 16 KiB")
    return code


def client_authentication(client: dict[str, Any], form: dict[str, str],
                          headers: list[tuple[str, str]], *, signer: Signer | None,
                          audience: str, wall_now: float, jti: str) -> None:
    """Add the client's authentication to a token request (its form and headers).  Basic
    is base64 of the form-urlencoded id and secret (RFC 6749 section 2.3.1), with the id also
    in the body and the secret never there; ``private_key_jwt`` signs an assertion for ``audience``
    (the issuer, RFC 7523bis)."""
    method = client.get("method", "none")
    client_id = client["client_id"]
    secret = client.get("client_secret")
    if method == "client_secret_basic" and secret:
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
        headers.append(("Authorization", "Basic " + b64encode(pair.encode()).decode()))
        # Identification, not a second authentication (RFC 6749 section 3.2.1): servers
        # built on the official SDKs refuse a Basic request without it.
        form["client_id"] = client_id
    elif method == "client_secret_post" and secret:
        form["client_id"] = client_id
        form["client_secret"] = secret
    elif method == "private_key_jwt" and signer is not None:
        form["client_id"] = client_id
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = client_assertion(signer, client_id=client_id,
                                                    audience=audience, now=wall_now, jti=jti)
    else:
        form["client_id"] = client_id


def _lifetime(expires_in: object) -> float | None:
    if isinstance(expires_in, str):
        try:
            expires_in = float(expires_in)
        except ValueError:
            return None
    if isinstance(expires_in, bool) or not isinstance(expires_in, (int, float)):
        return None
    try:
        seconds = float(expires_in)
    except OverflowError:  # a 400-digit integer: "a very long time"
        seconds = MAX_TOKEN_LIFETIME
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, MIN_TOKEN_LIFETIME), MAX_TOKEN_LIFETIME)


def parse_tokens(doc: dict[str, Any], *, what: str, dpop: bool, wall_now: float,
                 previous: Tokens | None, requested: Sequence[str]) -> Tokens:
    """The tokens of a token answer.  ``previous`` (a refresh) gives the refresh token and
    scope the answer leaves out; else the scope is what was ``requested``.  A
    ``refresh_token`` that could not be sent (:func:`~._config.sendable`) counts as
    left out.  Raises :class:`TokenError`, and nothing else, for no header-safe
    ``access_token``, or a token type other than Bearer (or DPoP, when ``dpop``); messages
    never quote a token."""
    access = doc.get("access_token")
    kind = doc.get("token_type")
    if not isinstance(access, str) or not HEADER_SAFE.fullmatch(access):
        raise TokenError(f"the {what} has no usable access_token")
    if not isinstance(kind, str) or kind.lower() not in (
            ("bearer", "dpop") if dpop else ("bearer",)):
        raise TokenError(f"the {what} has token type {brief(kind, 40)}; only Bearer"
                         + (" or DPoP" if dpop else "") + " is used")
    lifetime = _lifetime(doc.get("expires_in"))
    refresh = doc.get("refresh_token")
    # One that could not be sent back (every refresh would fail the same way) counts as left
    # out: a refresh keeps the one it used.
    if not sendable(refresh):
        refresh = previous.refresh_token if previous is not None else None
    scope = doc.get("scope")
    if not isinstance(scope, str):
        scope = previous.scope if previous is not None else (" ".join(requested) or None)
    return Tokens(access, "DPoP" if kind.lower() == "dpop" else "Bearer",
                  None if lifetime is None else wall_now + lifetime, refresh, scope,
                  issued_at=wall_now)
