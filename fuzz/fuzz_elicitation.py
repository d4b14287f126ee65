"""Fuzz harness for URL-mode elicitation (``mcp_proto._elicitation``).

``check(data)`` reads ``data`` two ways, chosen by its first byte:

- **raw** (a first byte below 0x80): the rest decoded as UTF-8 (replacing what is not) is the
  URL of an ``elicitation/create`` request, its message and id fixed;
- **structured** (otherwise): params built from the data (URLs from parts: schemes of every
  case, user-info, IDN and ``xn--`` hosts, IPv6 literals, ports good and bad, paths with
  spaces, control characters and ``%`` escapes, lengths around :data:`MAX_ELICITATION_URL`;
  ids of every JSON type and length; messages that are not strings), a ``-32042`` error's
  ``data`` holding several of them and odd members, then a run of the tracker's calls.

Properties (any violation raises AssertionError):

- :func:`parse_url_elicitation` raises nothing but :class:`InvalidUrlElicitation`; an
  accepted URL is kept exactly as sent, is ``http``/``https`` with a host and no user-info,
  space or control character, within the length bound; ``origin`` is a prefix of the URL
  (scheme and authority, case-folded); ``punycode`` is True exactly when the host is not
  ASCII or a label starts with ``xn--``; the id is required with ``require_id`` and is then
  a non-empty string;
- :class:`UrlElicitationRequired` takes any ``data``: its elicitations are exactly the members
  that parse, ``invalid`` counts the others, and it never raises;
- :class:`ElicitationTracker` against a model: bounded by :data:`MAX_PENDING_ELICITATIONS`
  (the oldest dropped first), ``completed`` is True exactly once per pending id, a declined
  or cancelled id is forgotten, unknown ids are ignored.

Run: ``python fuzz/fuzz_elicitation.py /tmp/fz/elicitation fuzz/corpus/elicitation``.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._elicitation import (
    MAX_ELICITATION_ID,
    MAX_ELICITATION_URL,
    MAX_PENDING_ELICITATIONS,
    ElicitationTracker,
    InvalidUrlElicitation,
    UrlElicitation,
    UrlElicitationRequired,
    parse_url_elicitation,
)

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

SCHEMES = ("https", "http", "HTTPS", "javascript", "data", "file", "ftp", "", "hTtP", "ws")
USERINFO = ("", "", "", "user@", "user:pw@", "@", "a%40b@")
HOSTS = ("example.com", "auth.example", "xn--80ak6aa92e.com", "EXAMPLE.com", "b\u00fccher.de",
         "[::1]", "[2001:db8::1]", "127.0.0.1", "xn--.com", "xn--zz", "", "a..b", "[::1",
         "h\u0000st", "exa mple.com", "xn--nxasmq6b.xn--o3cw4h")
PORTS = ("", "", ":443", ":8080", ":0", ":65536", ":x", ":", ":99999999")
PATHS = ("", "/", "/consent?step=1", "/a b", "/\u00e9", "/%2e%2e/x", "#frag", "?q=\u0001",
         "/\t", "/" + "p" * 100)
IDS = ("e-1", "", None, 7, "x" * MAX_ELICITATION_ID, "x" * (MAX_ELICITATION_ID + 1), ["e"],
       "\u00e9", True)
MESSAGES = ("Sign in", "", None, 5, "x" * 300)


def _draw_url(ch: Choices) -> Any:
    if ch.chance(16):
        return ch.pick((None, 5, ["https://a.example"], {"url": "x"}))
    url = (f"{ch.pick(SCHEMES)}://{ch.pick(USERINFO)}{ch.pick(HOSTS)}{ch.pick(PORTS)}"
           f"{ch.pick(PATHS)}")
    if ch.chance(8):
        url = ch.pick(("/relative", "https:example.com", "//example.com/x", "mailto:a@b"))
    if ch.chance(16):  # around the length bound
        url = "https://a.example/" + "x" * (MAX_ELICITATION_URL - 18 - 2 + ch.below(5))
    return url


def draw_params(ch: Choices) -> dict[str, Any]:
    params: dict[str, Any] = {"mode": "url", "url": _draw_url(ch),
                              "message": ch.pick(MESSAGES)}
    eid = ch.pick(IDS)
    if eid is not None or ch.chance(2):
        params["elicitationId"] = eid
    return params


def _parse(params: dict[str, Any], require_id: bool) -> UrlElicitation | None:
    try:
        return parse_url_elicitation(params, require_id=require_id)
    except InvalidUrlElicitation:
        return None
    except Exception as exc:
        escaped("parse_url_elicitation", exc)


def check_params(params: dict[str, Any]) -> None:
    for require_id in (False, True):
        got = _parse(params, require_id)
        if got is None:
            continue
        url = params["url"]
        assert got.url == url, f"the URL changed: {url!r} -> {got.url!r}"[:300]
        assert len(url) <= MAX_ELICITATION_URL
        assert not any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7f for c in url), url
        scheme, _, rest = url.partition("://")
        assert scheme.lower() in ("http", "https"), url[:100]
        authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        assert "@" not in authority, f"user-info accepted: {url!r}"[:300]
        assert got.origin == f"{scheme}://{authority}".lower(), (got.origin, url[:100])
        assert got.host, f"no host: {url!r}"[:300]
        host = authority.rsplit(":", 1)[0] if not authority.startswith("[") else ""
        puny = not host.isascii() or any(label.lower().startswith("xn--")
                                         for label in host.split("."))
        assert got.punycode == puny, (got.punycode, url[:100])
        assert got.message == params["message"]
        if require_id:
            assert type(got.elicitation_id) is str and got.elicitation_id, got.elicitation_id


def check_error(ch: Choices, members: list[Any]) -> None:
    data: Any = {"elicitations": members}
    if ch.chance(8):
        data = ch.pick((None, "x", [members], {"elicitations": "x"}, {}))
    try:
        error = UrlElicitationRequired(-32042, "needs a URL", data, method="tools/call")
    except Exception as exc:
        escaped("UrlElicitationRequired", exc)
    listed = data.get("elicitations") if isinstance(data, dict) else None
    items = listed if isinstance(listed, list) else []
    good = [m for m in items if type(m) is dict and _parse(m, True) is not None]
    assert len(error.elicitations) == len(good), (len(error.elicitations), len(good))
    assert [e.url for e in error.elicitations] == [m["url"] for m in good]
    assert error.invalid == len(items) - len(good), (error.invalid, len(items), len(good))
    assert error.actions == {}


def check_tracker(ch: Choices) -> None:
    tracker = ElicitationTracker()
    model: OrderedDict[str, None] = OrderedDict()
    ids = [f"e{i}" for i in range(8)] + [str(i) for i in range(MAX_PENDING_ELICITATIONS + 4)]
    for _ in range(ch.below(200)):
        op = ch.below(4)
        eid = ch.pick(ids) if ch.below(4) else ids[ch.below(8)]
        if op == 0:
            tracker.offered(eid)
            model[eid] = None
            model.move_to_end(eid)
            while len(model) > MAX_PENDING_ELICITATIONS:
                model.popitem(last=False)
        elif op == 1:
            action = ch.pick(("accept", "decline", "cancel", "other"))
            tracker.answered(eid, action)
            if action != "accept":
                model.pop(eid, None)
        else:
            want = eid in model
            model.pop(eid, None)
            assert tracker.completed(eid) is want, f"completed({eid!r}) is not {want}"
            assert tracker.completed(eid) is False, f"completed({eid!r}) twice"


def check(data: bytes) -> None:
    if not data or data[0] < 0x80:
        url = data[1:].decode("utf-8", "replace")
        check_params({"mode": "url", "url": url, "message": "m", "elicitationId": "e"})
        return
    ch = Choices(data[1:])
    members: list[Any] = []
    for _ in range(1 + ch.below(4)):
        params = draw_params(ch)
        check_params(params)
        members.append(params if ch.below(8) else ch.pick((None, 1, "x", [params])))
    check_error(ch, members)
    check_tracker(ch)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
