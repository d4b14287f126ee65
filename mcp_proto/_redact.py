"""Keeping secrets out of what a client shows: stderr lines and tails, traces, error messages.

A :class:`Redactor` is built from the secret values a client was given (the environment
values it passed to a stdio server, the header values and bearer token of an HTTP one).
:meth:`Redactor.text` replaces every occurrence of one of them with :data:`REDACTED`;
:meth:`Redactor.message` returns a copy of a JSON value with those occurrences replaced in
every string, and with the value of every key that looks like a credential
(``authorization``, ``cookie``, ``token``, ``secret``, ``password``, ``api_key``...) replaced
unless it holds no secret: a boolean, null, or the number of a count (``input_tokens: 12``).
:func:`redact_url` shows a URL without what may be a secret in it.  Pure functions of their
input: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["CREDENTIAL_KEY_PARTS", "MIN_SECRET_LENGTH", "REDACTED", "Redactor", "redact_url"]

#: What a secret is replaced with.
REDACTED = "<redacted>"

#: Values shorter than this are not redacted: ``1``, ``yes``, ``dev`` or ``en`` occur in
#: ordinary text, so replacing them would garble every line a server writes while protecting
#: nothing worth calling a secret (no real token, key or password is that short).
MIN_SECRET_LENGTH = 4

#: A key whose lower-cased name contains one of these names a credential: its whole value is
#: replaced in a traced message, unless it cannot hold a secret: a boolean or null, or a
#: number under a key ending in ``tokens`` (a count: ``input_tokens``, ``outputTokens``,
#: ``total_tokens`` usage stays readable).  Any other number is replaced: a PIN or a
#: numeric key is a secret too.
CREDENTIAL_KEY_PARTS = ("authorization", "cookie", "token", "secret", "password",
                        "api_key", "apikey", "api-key")

#: Protocol keys that contain a credential word and are not credentials: a progress token
#: says which request a progress notification is about, ``maxTokens`` is a sampling limit.
_NOT_CREDENTIALS = frozenset({"progresstoken", "maxtokens"})

#: Keys whose value is a map of names (a JSON Schema's ``properties``: the names of a tool's
#: arguments), not of values: an argument called ``api_key`` keeps its schema in a trace.
_NAME_MAPS = frozenset({"properties"})

#: The authentication schemes whose credential follows a space in a header value: the
#: credential alone is a secret too (a server may echo it without the scheme).
_SCHEMES = ("bearer ", "basic ", "dpop ", "token ")

#: A query string's values: ``?api_key=...`` is how many hosted servers take a key.  A name
#: stops at the next ``?`` or ``&`` too, so each scan ends where the next may start (with
#: ``?`` inside names, ``????...`` rescanned the rest from every ``?``: quadratic).
_QUERY_VALUE = re.compile(r"([?&][^=&?#\s]*=)[^&#\s'\"]*")
#: User-info ends with the authority, at "/", "?" or "#" (RFC 3986 3.2): an "@" in a query
#: value is no user-info.
_USERINFO = re.compile(r"(://)[^/?#@\s'\"]*@")


def is_credential_key(key: str) -> bool:
    """Whether a key of a JSON object (or a header or query name) looks like a credential."""
    lowered = key.lower()
    if lowered in _NOT_CREDENTIALS:
        return False
    return any(part in lowered for part in CREDENTIAL_KEY_PARTS)


class Redactor:
    """Replaces secret values with :data:`REDACTED`.  Built from the values (the env values
    and header values a client was given); values shorter than :data:`MIN_SECRET_LENGTH`
    are ignored (see there why).  A value of several lines (a PEM key) is a secret whole and
    line by line too: a server's stderr is shown one line at a time.  Never raises for a
    string or a JSON value."""

    __slots__ = ("_secrets", "longest", "longest_bytes")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        found: set[str] = set()
        for given in secrets:
            if not isinstance(given, str):
                continue
            value = given.strip()
            found.add(value)
            lowered = value.lower()
            for scheme in _SCHEMES:  # "Bearer abc": "abc" alone too
                if lowered.startswith(scheme):
                    found.add(value[len(scheme):].strip())
            if "\n" in value or "\r" in value:  # each line of a PEM key, as stderr shows it
                found.update(line.strip() for line in value.splitlines())
        # Longest first: a secret that contains another is tried first (the ranges of all
        # are merged anyway, see text()).
        self._secrets = tuple(sorted((s for s in found if len(s) >= MIN_SECRET_LENGTH),
                                     key=len, reverse=True))
        #: Characters of the longest secret (0: none): how far past a cut one can reach.
        self.longest = len(self._secrets[0]) if self._secrets else 0
        #: Its UTF-8 bytes at most: the margin a byte window keeps before its cut.
        self.longest_bytes = max((len(s.encode("utf-8", "surrogatepass"))
                                  for s in self._secrets), default=0)

    @classmethod
    def of(cls, env: Mapping[str, str] | None = None,
           headers: Mapping[str, str] | None = None,
           extra: Iterable[str | None] = ()) -> Redactor:
        """The redactor of a client's ``env`` values, ``headers`` values and ``extra``
        values (a bearer token); None entries are skipped."""
        values = [*(env or {}).values(), *(headers or {}).values()]
        values += [v for v in extra if v is not None]
        return cls(values)

    def __bool__(self) -> bool:
        """Whether there is any secret to replace."""
        return bool(self._secrets)

    def text(self, s: str, start: int = 0, end: int | None = None) -> str:
        """``s[start:end]`` with every occurrence of a secret replaced by :data:`REDACTED`.

        Every occurrence of every secret is found in ``s`` first and overlapping ones are
        merged, then each merged range is replaced once (``abcdefgh`` and ``efghijkl`` in
        ``abcdefghijkl``: all of it goes).  The cut comes after: a secret crossing
        ``start`` or ``end`` is replaced whole, never shown in part, so to show a part of a
        long text pass the text (or a slice reaching :attr:`longest` characters past each
        cut) and the cut, not a cut text.  Cheap when no secret occurs (one ``in`` test per
        secret)."""
        stop = len(s) if end is None else min(max(end, 0), len(s))
        start = min(max(start, 0), stop)
        if not self._secrets:
            return s[start:stop]
        lo = max(0, start - self.longest)
        hi = min(len(s), stop + self.longest)
        window = s[lo:hi] if lo or hi < len(s) else s
        spans: list[tuple[int, int]] = []
        for secret in self._secrets:
            if secret not in window:
                continue
            size = len(secret)
            at = window.find(secret)
            while at >= 0:
                spans.append((lo + at, lo + at + size))
                at = window.find(secret, at + 1)
        if not spans:
            return s[start:stop]
        spans.sort()
        out: list[str] = []
        pos = start
        merged_start, merged_end = spans[0]
        for begin, finish in [*spans[1:], (len(s) + 1, len(s) + 1)]:
            if begin <= merged_end:  # overlapping (or touching): one range
                merged_end = max(merged_end, finish)
                continue
            if merged_end > start and merged_start < stop:
                out.append(s[pos:max(merged_start, pos)])
                out.append(REDACTED)
                pos = min(merged_end, stop)
            merged_start, merged_end = begin, finish
        out.append(s[pos:stop])
        return "".join(out)

    def message(self, obj: Any) -> Any:
        """A copy of the JSON value ``obj`` with secrets replaced in every string, and the
        value of every credential-looking key replaced unless it holds no secret (a
        boolean, null, a count of tokens: see :data:`CREDENTIAL_KEY_PARTS`).  A key stays
        as it is unless it contains a secret; two keys that redaction would make equal
        stay distinct (``<redacted>``, ``<redacted>#2``).  Iterative: any nesting depth
        (``json`` parses about a thousand levels, more than a recursive walk survives)."""
        if not isinstance(obj, (dict, list)):
            return self._leaf(obj)
        root: Any = {} if isinstance(obj, dict) else []
        stack: list[tuple[Any, Any, bool]] = [(obj, root, False)]
        while stack:
            source, target, names = stack.pop()
            if isinstance(source, dict):
                for name, key, value in self._keys(source):
                    if not names and isinstance(key, str) and is_credential_key(key) \
                            and not _harmless(key, value):
                        target[name] = REDACTED
                    elif isinstance(value, (dict, list)):
                        target[name] = child = _empty(value)
                        stack.append((value, child, isinstance(value, dict) and not names
                                      and key in _NAME_MAPS))
                    else:
                        target[name] = self._leaf(value)
            else:
                for item in source:
                    if isinstance(item, (dict, list)):
                        target.append(child := _empty(item))
                        stack.append((item, child, False))
                    else:
                        target.append(self._leaf(item))
        return root

    def _leaf(self, obj: Any) -> Any:
        return self.text(obj) if isinstance(obj, str) and self._secrets else obj

    def _keys(self, source: dict[Any, Any]) -> list[tuple[Any, Any, Any]]:
        """``(shown key, key, value)`` of each entry: a key with a secret in it redacted,
        suffixed ``#2``, ``#3``... when it would equal another key of the object."""
        if not self._secrets:
            return [(key, key, value) for key, value in source.items()]
        shown = [(self.text(key) if isinstance(key, str) else key, key, value)
                 for key, value in source.items()]
        if all(name == key for name, key, _ in shown):
            return shown
        taken = {key for name, key, _ in shown if name == key}
        out = []
        for name, key, value in shown:
            unique = name
            if name != key:
                n = 1
                while unique in taken:
                    n += 1
                    unique = f"{name}#{n}"
                taken.add(unique)
            out.append((unique, key, value))
        return out


def _empty(container: dict[Any, Any] | list[Any]) -> Any:
    """A new empty container of the same kind, to be filled with the copy."""
    return {} if isinstance(container, dict) else []


def _harmless(key: str, value: Any) -> bool:
    """Whether a credential-looking key's value can show: a boolean or null holds no secret
    (``cookies: false``), nor does the number of a ``...tokens`` count (``input_tokens: 12``,
    ``outputTokens: 7``); any other number may be a PIN."""
    if value is None or isinstance(value, bool):
        return True
    return isinstance(value, (int, float)) and key.lower().endswith("tokens")


def redact_url(text: str, redactor: Redactor | None = None) -> str:
    """``text`` (a URL, or a message holding URLs) as it may be shown: every query value and
    user-info replaced by :data:`REDACTED` (``https://h/mcp?key=<redacted>``: hosted servers
    take keys in the query under any name, so no value is shown), then ``redactor``'s
    secrets.  Linear in the text; never raises."""
    # User-info first: a password may hold "&" and "=" (RFC 3986), which the query pattern
    # would take for a query value, eating the "@" the user-info pattern needs.
    shown = _QUERY_VALUE.sub(r"\1<redacted>", _USERINFO.sub(r"\1<redacted>@", text))
    return redactor.text(shown) if redactor is not None else shown
