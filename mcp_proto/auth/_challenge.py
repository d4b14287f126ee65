"""``WWW-Authenticate`` parsing (RFC 9110 section 11.6.1; rule R19 of the authorization notes).

A response may carry several ``WWW-Authenticate`` fields and each field value a
comma-separated list of challenges, each either bare (``Negotiate``), with a token68
(``Basic abc==``) or with auth-params (``Bearer realm="a", error="x"``).  The list commas and
the auth-param commas are the same character, so the parser reads left to right: after a
comma, ``token =`` is another auth-param of the current challenge and anything else starts a
new challenge.  Quoted strings are read with their escapes, so a ``resource_metadata=`` inside
another parameter's quoted value is just text of that value.

Nothing here raises: a field value that stops following the grammar yields the challenges
before the break (the challenge being read keeps the auth-params read so far) and the rest of
that value is ignored, since nothing after a break can be trusted to mean what it seems.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_CHALLENGE_SIZE",
    "Challenge",
    "oauth_challenge",
    "parse_www_authenticate",
]

#: Characters (bytes: header values are decoded as latin-1) of all ``WWW-Authenticate`` values
#: one response is read for (rule R12).  Real challenges are a few hundred bytes; the head of a
#: response is bounded elsewhere, this bounds the work and memory the parser spends on it.
#: Values past the limit are ignored, and a challenge cut by it is dropped, not half-read.
MAX_CHALLENGE_SIZE = 8 * 1024

_DIGITS = "0123456789"
_ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_TCHAR = frozenset(_ALPHA + _DIGITS + "!#$%&'*+-.^_`|~")  # RFC 9110 section 5.6.2
_TOKEN68 = frozenset(_ALPHA + _DIGITS + "-._~+/")  # RFC 9110 section 11.2, before the '='s
_OWS = " \t"


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: ``scheme`` lowercased, ``params`` with lowercased names and unescaped
    values (the first of duplicate names wins), or a ``token68`` instead of params."""

    scheme: str
    params: dict[str, str]
    token68: str | None = None

    def get(self, name: str) -> str | None:
        """The value of auth-param ``name`` (case-insensitive), or None.  Raises nothing."""
        return self.params.get(name.lower())


def parse_www_authenticate(values: Sequence[str]) -> list[Challenge]:
    """Every challenge in ``values``, one element per ``WWW-Authenticate`` field value, in
    order.  A bare string is taken as one value; elements that are not strings are skipped.
    Only the first :data:`MAX_CHALLENGE_SIZE` characters are read.  Never raises."""
    if isinstance(values, str):
        values = [values]
    out: list[Challenge] = []
    budget = MAX_CHALLENGE_SIZE
    try:
        for value in values:
            if budget <= 0:
                break
            if not isinstance(value, str):
                continue
            truncated = len(value) > budget
            text = value[:budget]
            budget -= len(text)
            found = _parse_value(text)
            if truncated and found:
                found.pop()  # the cut may have fallen inside it
            out.extend(found)
    except Exception:  # pragma: no cover - defensive: the parser itself does not raise
        return out
    return out


def oauth_challenge(challenges: Sequence[Challenge], *, dpop: bool = False) -> Challenge | None:
    """The challenge that drives OAuth: with ``dpop`` the first ``DPoP`` challenge, else the
    first ``Bearer``; without, the first ``Bearer``, else the first ``DPoP``.  None if there
    is neither.  Raises nothing."""
    order = ("dpop", "bearer") if dpop else ("bearer", "dpop")
    for scheme in order:
        for challenge in challenges:
            if challenge.scheme == scheme:
                return challenge
    return None


def _skip_ows(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _OWS:
        i += 1
    return i


def _skip_list(s: str, i: int) -> int:
    """Past whitespace and commas: empty list elements are allowed (RFC 9110 section 5.6.1)."""
    n = len(s)
    while i < n and (s[i] in _OWS or s[i] == ","):
        i += 1
    return i


def _token_end(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _TCHAR:
        i += 1
    return i


def _quoted(s: str, i: int) -> tuple[str, int] | None:
    """The unescaped quoted-string starting at ``s[i] == '"'`` and the index after it, or
    None if it is unterminated or holds a control character."""
    n = len(s)
    i += 1
    parts: list[str] = []
    start = i
    while i < n:
        c = s[i]
        if c == '"':
            parts.append(s[start:i])
            return "".join(parts), i + 1
        if c == "\\":
            if i + 1 >= n or not _quotable(s[i + 1]):
                return None
            parts.append(s[start:i])
            parts.append(s[i + 1])
            i += 2
            start = i
            continue
        if not _quotable(c):
            return None
        i += 1
    return None


def _quotable(c: str) -> bool:
    """HTAB, SP, VCHAR or obs-text: what qdtext and quoted-pair allow (besides the quote and
    the backslash themselves, which the caller handles)."""
    o = ord(c)
    return c == "\t" or 0x20 <= o <= 0x7E or o >= 0x80


def _parse_value(s: str) -> list[Challenge]:
    out: list[Challenge] = []
    n = len(s)
    i = _skip_list(s, 0)
    while i < n:
        j = _token_end(s, i)
        if j == i:
            return out
        scheme = s[i:j].lower()
        k = _skip_ows(s, j)
        if k >= n or s[k] == ",":
            out.append(Challenge(scheme, {}))
            i = _skip_list(s, k)
            continue
        if k == j:  # the scheme must be followed by a space (or end its element)
            return out
        i = k
        # token68: its characters, any '='s, then the end of the list element.
        j = i
        while j < n and s[j] in _TOKEN68:
            j += 1
        if j > i:
            while j < n and s[j] == "=":
                j += 1
            k = _skip_ows(s, j)
            if k >= n or s[k] == ",":
                out.append(Challenge(scheme, {}, s[i:j]))
                i = _skip_list(s, k)
                continue
        params: dict[str, str] = {}
        out.append(Challenge(scheme, params))
        nxt = _parse_params(s, i, params)
        if nxt is None:
            return out
        i = nxt
    return out


def _parse_params(s: str, i: int, params: dict[str, str]) -> int | None:
    """Reads auth-params from ``i`` into ``params``; the index of the next challenge (or the
    end), or None where the grammar breaks."""
    n = len(s)
    while True:
        j = _token_end(s, i)
        if j == i:
            return None
        name = s[i:j].lower()
        k = _skip_ows(s, j)
        if k >= n or s[k] != "=":
            return None
        k = _skip_ows(s, k + 1)
        if k < n and s[k] == '"':
            got = _quoted(s, k)
            if got is None:
                return None
            value, k = got
        else:
            end = _token_end(s, k)
            if end == k:
                return None
            value, k = s[k:end], end
        params.setdefault(name, value)
        k = _skip_ows(s, k)
        if k >= n:
            return n
        if s[k] != ",":
            return None
        k = _skip_list(s, k)
        if k >= n:
            return n
        j = _token_end(s, k)
        if j == k:
            return None
        m = _skip_ows(s, j)
        if m < n and s[m] == "=":
            i = k  # another auth-param of this challenge
            continue
        return k  # a new challenge starts here
