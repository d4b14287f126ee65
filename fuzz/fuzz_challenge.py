"""Fuzz harness for the ``WWW-Authenticate`` parser (``mcp_proto.auth._challenge``).

``check(data)`` reads ``data`` two ways, chosen by its first byte:

- **raw** (a first byte below 0x80): the data decoded as latin-1 (how header values are
  decoded), split on ``\\n`` into field values (a header value never holds a line break);
- **structured** (otherwise): field values built from the data: schemes (``Bearer``,
  ``DPoP``, ``Basic``, odd ones), token68 values, auth-params (``realm``, ``error``,
  ``scope``, ``resource_metadata`` ...) with token or quoted values (escapes, commas, ``=``,
  obs-text, control characters), list separators (``,``, ``, ,``, tabs), breaks in the
  grammar, values near :data:`MAX_CHALLENGE_SIZE`, elements that are not strings.

Properties (any violation raises AssertionError):

- :func:`parse_www_authenticate` raises nothing, and neither does the parser behind its
  defensive ``except`` (``_parse_value``, called directly: "the parser itself does not
  raise"); :func:`oauth_challenge` and :meth:`Challenge.get` raise nothing;
- each challenge has a non-empty lowercase token ``scheme``; ``params`` names are lowercase
  tokens, values hold no control character but HTAB; a token68 challenge has no params;
- bounded: the characters of all challenges (schemes, token68s, names and values) are at
  most :data:`MAX_CHALLENGE_SIZE`; a value is read only up to what is left of the budget;
- round trip: the challenges written back canonically (every value quoted and escaped) parse
  to the same challenges; several field values parse to the concatenation of each one's
  challenges (within the budget); elements that are not strings are skipped; a bare string
  is one value;
- :func:`oauth_challenge` is the first Bearer (else DPoP), or the first DPoP with ``dpop``.

Run: ``python fuzz/fuzz_challenge.py /tmp/fz/challenge fuzz/corpus/challenge
-dict=fuzz/challenge.dict``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto.auth._challenge import (
    MAX_CHALLENGE_SIZE,
    Challenge,
    _parse_value,
    oauth_challenge,
    parse_www_authenticate,
)

_TCHAR = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                   "!#$%&'*+-.^_`|~")
_TOKEN68 = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/")

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

SECRET = "S3CRET-m4rker"
SCHEMES = ("Bearer", "bearer", "DPoP", "dpop", "Basic", "Negotiate", "Digest", "x-Custom",
           "B\u00e9arer", "", "Bearer\t", "1")
NAMES = ("realm", "error", "error_description", "scope", "resource_metadata", "REALM",
         "algs", "max_age", "x", "", "a b", "\u00e9")
VALUES = ('"mcp"', '"invalid_token"', '"read write"', '"https://rs.example/.well-known/'
          'oauth-protected-resource"', "token", '"a \\"quoted\\" \\\\ value"', '"a, b=c"',
          '""', '"\u00e9\u00ff"', '"tab\there"', '"ctl\x01"', '"unterminated', "=", "a=b",
          '"' + SECRET + '"', "x" * 40, '"\\', '"\x7f"')
TOKEN68S = ("abc==", SECRET, "a/b+c", "=", "YWxhZGRpbjpvcGVuc2VzYW1l", "a==b")
SEPARATORS = (", ", ",", " , ", ",,", "\t,\t", ", ,", " ", "")


def _draw_challenge(ch: Choices) -> str:
    scheme = ch.pick(SCHEMES)
    k = ch.below(4)
    if k == 0:
        return scheme
    if k == 1:
        return f"{scheme} {ch.pick(TOKEN68S)}"
    params = [f"{ch.pick(NAMES)}{ch.pick(('=', ' = ', '= ', ''))}{ch.pick(VALUES)}"
              for _ in range(1 + ch.below(4))]
    return f"{scheme} " + ch.pick(SEPARATORS).join(params)


def draw_values(ch: Choices) -> list[Any]:
    values: list[Any] = []
    for _ in range(1 + ch.below(3)):
        k = ch.below(32)
        if k == 0:
            values.append(ch.pick((None, 5, b"Bearer", ["Bearer"])))
            continue
        text = ch.pick(SEPARATORS).join(_draw_challenge(ch) for _ in range(1 + ch.below(4)))
        if k == 1:  # near the budget: the cut falls somewhere in the last challenge
            pad = f'Bearer realm="{"r" * (MAX_CHALLENGE_SIZE - 40 - ch.below(64))}", '
            text = pad + text
        elif k == 2:
            text = ch.pick(SEPARATORS) + text + ch.pick(SEPARATORS)
        values.append(text)
    return values


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(challenges: list[Challenge]) -> str:
    """The challenges written back: params quoted and escaped, one ``, `` between."""
    out = []
    for c in challenges:
        if c.token68 is not None:
            out.append(f"{c.scheme} {c.token68}")
        elif c.params:
            out.append(c.scheme + " " + ", ".join(f"{k}={_quote(v)}"
                                                  for k, v in c.params.items()))
        else:
            out.append(c.scheme)
    return ", ".join(out)


def _size(challenges: list[Challenge]) -> int:
    return sum(len(c.scheme) + len(c.token68 or "")
               + sum(len(k) + len(v) for k, v in c.params.items()) for c in challenges)


def _parse(values: Any, what: str) -> list[Challenge]:
    try:
        return parse_www_authenticate(values)
    except Exception as exc:
        escaped(f"parse_www_authenticate ({what})", exc)


def check_challenges(challenges: list[Challenge]) -> None:
    assert type(challenges) is list
    for c in challenges:
        assert isinstance(c, Challenge), f"parse returned {c!r}"[:200]
        assert c.scheme and set(c.scheme) <= _TCHAR and c.scheme == c.scheme.lower(), c.scheme
        if c.token68 is not None:
            assert not c.params, f"token68 and params: {c!r}"[:200]
            body = c.token68.rstrip("=")
            assert body and set(body) <= _TOKEN68, f"token68 {c.token68!r}"[:200]
        for name, value in c.params.items():
            assert name and set(name) <= _TCHAR and name == name.lower(), f"param {name!r}"
            assert type(value) is str
            assert all(ch == "\t" or 0x20 <= ord(ch) != 0x7F for ch in value), (
                f"control character in {value!r}"[:200])
            assert c.get(name.upper()) == value, "Challenge.get is not case-insensitive"
        assert c.get("no-such-param") is None or "no-such-param" in c.params


def check_oauth(challenges: list[Challenge]) -> None:
    for dpop in (False, True):
        try:
            got = oauth_challenge(challenges, dpop=dpop)
        except Exception as exc:
            escaped("oauth_challenge", exc)
        order = ("dpop", "bearer") if dpop else ("bearer", "dpop")
        want = next((c for s in order for c in challenges if c.scheme == s), None)
        assert got is want, f"oauth_challenge(dpop={dpop}) picked {got!r}"[:300]


def check_values(values: list[Any]) -> None:
    strings = [v for v in values if isinstance(v, str)]
    for text in strings:
        try:
            _parse_value(text[:MAX_CHALLENGE_SIZE])
        except Exception as exc:
            escaped("_parse_value (behind the defensive except)", exc)
    got = _parse(values, "values")
    check_challenges(got)
    check_oauth(got)
    assert _size(got) <= MAX_CHALLENGE_SIZE, f"{_size(got)} characters of challenges"
    assert _parse(strings, "strings only") == got, "an element that is not a string counted"
    if len(strings) == 1:
        assert _parse(strings[0], "a bare string") == got, "a bare string is not one value"
    if sum(map(len, strings)) <= MAX_CHALLENGE_SIZE:
        each = [c for s in strings for c in _parse([s], "one value")]
        assert each == got, "several values differ from each one parsed alone"
    text = render(got)
    if len(text) <= MAX_CHALLENGE_SIZE:
        again = _parse([text], "rendered")
        assert again == got, f"round trip: {text[:200]!r} parsed to {again!r}"[:400]


def check(data: bytes) -> None:
    if not data or data[0] < 0x80:
        check_values(list(data.decode("latin-1").split("\n")))
        return
    check_values(draw_values(Choices(data[1:])))


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
