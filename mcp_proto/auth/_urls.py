"""The URL policy of authorization and the discovery URLs (rules R3, R5, R6, R7 of the notes).

:func:`parse_auth_url` is the one parser every URL of the flow goes through: it refuses
what must never be fetched or opened (other schemes, credentials, fragments, control
characters, hosts that parsers disagree on).  :func:`check_url` adds the transport policy:
https unless the host is loopback, and no IP literal in a zone the MCP server's own zone does
not allow (server-side request forgery).  Host names are checked by the binding on the
addresses they resolve to, with :func:`address_allowed`, at connect time.

The discovery helpers build the candidate URLs of RFC 9728 (protected resource metadata),
RFC 8414 / OpenID Connect Discovery (authorization server metadata) and the 2025-03-26
fallbacks, and :func:`resource_matches` is the RFC 9728 section 3.3 check.

:func:`safe_url` is how every message of the flow shows a URL (or any string that may hold
some): the userinfo of every URL in it hidden, the query and fragment dropped, one line.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from .._auth_errors import UnsafeUrl

__all__ = [
    "MAX_SHOWN_URL",
    "MAX_URL_LENGTH",
    "AuthUrl",
    "address_allowed",
    "address_zone",
    "as_metadata_candidates",
    "canonical_resource",
    "check_url",
    "legacy_endpoint",
    "legacy_metadata_url",
    "origin_of",
    "parse_auth_url",
    "prm_candidates",
    "resource_matches",
    "safe_url",
]

#: Characters of any URL the flow parses (rule R12).  Real metadata, endpoint and
#: authorization URLs are well under 2 KiB; 8 KiB is what common servers accept as a request
#: line, so nothing longer could be sent anyway.
MAX_URL_LENGTH = 8 * 1024

#: Characters of a URL quoted in an error message: enough to recognise it, and a hostile
#: 8 KiB URL does not turn into an 8 KiB log line.
MAX_SHOWN_URL = 200

_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_PORT = 65535
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")

_PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
_OIDC_WELL_KNOWN = "/.well-known/openid-configuration"

#: Cloud instance metadata services (AWS/GCP/Azure/OpenStack, AWS over IPv6, Alibaba): the
#: classic SSRF target, named apart so messages can say so.
_METADATA = frozenset({
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("fd00:ec2::254"),
    ipaddress.ip_address("100.100.100.200"),
})
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # connecting to 0.0.0.0 reaches this host
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated, never a public destination
_PRIVATE_NETS = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7",
))

_ZONES = frozenset({
    "loopback", "private", "link-local", "metadata", "unspecified", "multicast", "public",
    "name",
})


@dataclass(frozen=True, slots=True)
class AuthUrl:
    """A URL that passed :func:`parse_auth_url`: ``scheme`` ``http``/``https``, ``host``
    lowercased (IPv6 without brackets), ``port`` with the default applied, ``path`` as written
    (possibly empty), ``query`` without its ``?``, and the ``raw`` string."""

    scheme: str
    host: str
    port: int
    path: str
    query: str
    raw: str

    @property
    def origin(self) -> tuple[str, str, int]:
        """``(scheme, host, port)``, what origin checks compare."""
        return (self.scheme, self.host, self.port)

    @property
    def authority(self) -> str:
        """``host[:port]``, the port only when not the default, IPv6 bracketed."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port == _DEFAULT_PORTS[self.scheme]:
            return host
        return f"{host}:{self.port}"

    @property
    def target(self) -> str:
        """The request target: the path (``/`` if empty) and ``?query`` if any."""
        path = self.path or "/"
        return f"{path}?{self.query}" if self.query else path

    @property
    def without_query(self) -> str:
        """``scheme://authority`` and the path: the URL with no query (DPoP's ``htu``)."""
        return f"{self.scheme}://{self.authority}{self.path}"

    @property
    def origin_url(self) -> str:
        """``scheme://authority``."""
        return f"{self.scheme}://{self.authority}"


#: Where an authority (``[userinfo@]host[:port]``) may start, for :func:`safe_url`: after two
#: or more slashes or backslashes (``//h``, ``\\h``, ``///h``: the WHATWG parser reads any
#: of them so for its special schemes, and ``//h`` is a scheme-relative reference), or after
#: ``http:``, ``https:``, ``ws:``, ``wss:``, ``ftp:`` in any case followed by any number of
#: slashes, none included (the WHATWG parser reads ``https:user:pw@h`` as ``https://...``),
#: even at the end of a longer word (``0https:``, ``news:``): a reader may not see the word.
_AUTHORITY_START = re.compile(r"[/\\]{2,}|(?:https?|wss?|ftp):[/\\]*", re.IGNORECASE)
#: What ends an authority (RFC 3986 section 3.2; the WHATWG parser also ends it at ``\``,
#: which is kept inside here so the userinfo found is the longer of the two readings).
_AUTHORITY_END = re.compile(r"[/?#]")
#: An authority that is a host and nothing else: reg-name characters (RFC 3986 section 3.2.2,
#: percent-encoding included) or a bracketed IP literal.  Anything else (a ``:`` outside
#: brackets, a space, a backslash, non-ASCII) may be the front of a userinfo whose password
#: holds a raw ``/``, ``?`` or ``#``.
_PLAIN_HOST = re.compile(r"[A-Za-z0-9._~%!$&'()*+,;=-]*|\[[^\]]*\]")
#: A plain host (not empty; a bracketed literal of IP-literal characters only) and a port
#: of one to five digits; :func:`_strip_userinfo` also checks it is at most 65535 (a larger
#: one is no port for any parser).  ``user:1234`` reads the same, so what follows decides.
_PLAIN_HOST_PORT = re.compile(
    r"(?:[A-Za-z0-9._~%!$&'()*+,;=-]+|\[[A-Za-z0-9._~%!$&'()*+,;=:-]*\]):([0-9]{1,5})")
#: Removed before anything else: the WHATWG parser drops tabs and newlines anywhere in a URL,
#: so ``https://user:p\nw@h`` is a URL with a password.
_DROPPED = str.maketrans("", "", "\t\n\r")
#: Shown as ``\\xNN`` / ``\\uNNNN``: control characters and the Unicode line and
#: paragraph separators (a message is one line, whatever a server put in a URL).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_QUERY_OR_FRAGMENT = re.compile(r"[?#]")
_COLON = re.compile(":")
_SEGMENT_END = re.compile(r"[/?#\s]")


class _Ahead:
    """Where the next match of ``pattern`` in ``text`` at or after a position is
    (``len(text)``: none).  The positions asked for never decrease, so each character is
    scanned once however many times it is asked."""

    __slots__ = ("_found", "_pattern", "_text")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self._text = text
        self._pattern = pattern
        self._found = -1

    def at(self, pos: int) -> int:
        if self._found < pos:
            match = self._pattern.search(self._text, pos)
            self._found = len(self._text) if match is None else match.start()
        return self._found


class _LastBefore:
    """Where the last ``char`` of ``text`` before a position is (-1: none).  The positions
    asked for never decrease, so each character is scanned once."""

    __slots__ = ("_char", "_last", "_scanned", "_text")

    def __init__(self, text: str, char: str) -> None:
        self._text = text
        self._char = char
        self._last = -1
        self._scanned = 0  # text[:_scanned] is searched, _last is its last char

    def at(self, pos: int) -> int:
        if pos > self._scanned:
            found = self._text.rfind(self._char, self._scanned, pos)
            if found != -1:
                self._last = found
            self._scanned = pos
        return self._last


def _strip_userinfo(text: str) -> str:
    """``text`` with the userinfo of every authority in it replaced by ``***`` (the ``@``
    kept).  The userinfo is what comes before the last ``@`` of the authority (what every
    parser reads).  When an ``@`` comes later, what is left of the authority decides:

    - a plain host: only when the path's first segment holds a ``:`` (a user name with a raw
      ``/``, ``https://us/er:pw@h``) does the userinfo run to the last ``@`` of the text,
      else an ``@`` of the path, query or fragment is not a userinfo's;
    - a plain host and a port followed by a path: the userinfo runs to the last ``@`` of the
      path, if there is one (``https://user:12/34@h``: a password with a raw ``/`` reads as
      a port and a path); an ``@`` in the query or fragment is not looked at (they are
      dropped, and whoever wrote them does not choose the host shown);
    - anything else (a port with no path after it, a port over 65535, a character no host
      has): the userinfo runs to the last ``@`` of the text, a password with a raw ``/``,
      ``?``, ``#`` or whitespace (which ends the authority for a parser but not for the
      person who wrote it).

    A URL that starts in what is hidden already still counts: its userinfo may end
    further.  Linear in ``len(text)``: the authorities and their ends only move forward."""
    out: list[str] = []
    pos = 0  # text[:pos] is in out already
    search = 0
    last_at = text.rfind("@")
    ends = _Ahead(text, _AUTHORITY_END)
    segment_ends = _Ahead(text, _SEGMENT_END)
    colons = _Ahead(text, _COLON)
    cuts = _Ahead(text, _QUERY_OR_FRAGMENT)
    ats_before = _LastBefore(text, "@")
    while (found := _AUTHORITY_START.search(text, search)) is not None:
        start = found.end()
        end = ends.at(start)
        at = text.rfind("@", start, end)
        host = max(at + 1, start)
        if last_at < end:
            pass  # no later "@": the authority's own userinfo, if any
        elif _PLAIN_HOST.fullmatch(text, host, end):
            if (text.startswith("/", end)
                    and colons.at(end) < min(segment_ends.at(end + 1), last_at)):
                at = last_at
        elif ((ported := _PLAIN_HOST_PORT.fullmatch(text, host, end)) is not None
              and int(ported.group(1)) <= _MAX_PORT and text.startswith("/", end)):
            in_path = ats_before.at(cuts.at(end))
            if in_path >= end:
                at = in_path
        else:
            at = last_at
        if at > pos:
            if start >= pos:
                out.append(text[pos:start])
                out.append("***")
            pos = at  # else it starts in what is hidden already and ends further
        # from the end of the authority, not from the "@": an "@" of the path may be inside
        # the userinfo of a URL that starts before it (``https://h:1/https://u@v:p?w@h``)
        search = end
    out.append(text[pos:])
    return "".join(out)


def _redacted(text: str) -> str:
    """``text`` without userinfo, query and fragment (see :func:`safe_url`), not shortened."""
    cleaned = _strip_userinfo(text.translate(_DROPPED))
    cut = _QUERY_OR_FRAGMENT.search(cleaned)
    return cleaned if cut is None else cleaned[:cut.start()]


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_SHOWN_URL else text[:MAX_SHOWN_URL - 3] + "..."


def safe_url(url: str) -> str:
    """``url`` (or any string holding URLs) fit for a message.  Raises nothing.

    - The userinfo of every URL in it is replaced by ``***``: wherever the URL starts (after
      any prefix), whatever its scheme and its case, scheme-relative (``//user:pw@h``) or with
      the slashes the WHATWG parser forgives (``https:user:pw@h``, ``https:\\\\user:pw@h``),
      with an IPv6 host, percent-encoded, or a password holding ``@``, ``/``, ``?``, ``#`` or
      whitespace.  So a later ``@`` may be taken for the end of a userinfo: after a plain
      host and a port, the last ``@`` of the path (``https://user:12/34@h.com/x`` shows as
      ``https://***@h.com/x``, and so ``https://h:8443/@team`` as ``https://***@team``), never
      one in the query or fragment (``http://localhost:3000/cb?u=x@evil.example`` shows as
      ``http://localhost:3000/cb``); after a port with no path, a port over 65535 or
      characters no host has, the last ``@`` of the text (``https://admin:2024#pw@h/`` shows
      as ``https://***@h/``); after a plain host, only when the path's first segment holds a
      ``:`` (``https://h/a:b@c``), else an ``@`` in the path, query or fragment is left alone
      (``https://server.example/@team/mcp``).  The one userinfo still shown: a user name and
      the front of its password when the password starts with a number up to 65535, then a
      raw ``/``, and holds a raw ``?`` or ``#`` further on (``https://user:12/a?b@h`` shows as
      ``https://user:12/a``, which is how every parser reads it: host ``user``, port 12).
    - Everything from the first ``?`` or ``#`` is dropped: a query or a fragment may carry a
      ``code``, an ``access_token``, a ``state``...
    - Tabs and newlines are dropped (as URL parsers drop them), other control characters
      and the Unicode line separators shown as escapes (``\\x00``, ``\\u2028``): a message
      is one line, whatever a server put in a URL.
    - Then it is shortened to :data:`MAX_SHOWN_URL` characters (``...`` at the end).

    A string without userinfo, ``?``, ``#`` and control characters, at most
    :data:`MAX_SHOWN_URL` long, comes back unchanged.  Not a string: its type is named."""
    if not isinstance(url, str):
        return f"(a {type(url).__name__}, not a URL)"
    shown = _redacted(url)
    shown = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), shown)
    return _shorten(shown)


def _shown(url: str) -> str:
    """``url`` fit for a message: :func:`safe_url`'s redaction (no userinfo, query or
    fragment), shortened, and quoted so control characters show as escapes."""
    return repr(_shorten(_redacted(url)))


def _refuse(what: str, url: str, reason: str) -> UnsafeUrl:
    return UnsafeUrl(f"{what} {_shown(url)} is refused: {reason}")


def parse_auth_url(url: str, *, what: str) -> AuthUrl:
    """``url`` parsed, for the flow to use as ``what`` (``"the token endpoint"``...).

    Raises :class:`UnsafeUrl` (naming ``what`` and the URL without its query) if ``url`` is
    not a string, is longer than :data:`MAX_URL_LENGTH`, holds control characters, spaces or
    non-ASCII characters (hosts come as punycode, paths percent-encoded), has a scheme other
    than http/https, userinfo, a fragment (even an empty one), no host, a host with
    characters outside letters, digits, ``-``, ``.``, ``_``, a numeric host that is not a
    dotted-quad IPv4 address (``127.1``: resolvers and parsers disagree on those), an IPv6
    literal that does not parse or has a zone, or a port that is empty, not digits or out of
    range."""
    if not isinstance(url, str):
        raise UnsafeUrl(f"{what} is not a URL string (got {type(url).__name__})")
    if len(url) > MAX_URL_LENGTH:
        raise _refuse(what, url, f"longer than {MAX_URL_LENGTH} characters")
    if any(ord(c) <= 0x20 or ord(c) >= 0x7F for c in url):
        raise _refuse(what, url, "it holds spaces, control or non-ASCII characters")
    if "#" in url:
        raise _refuse(what, url, "it has a fragment")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise _refuse(what, url, "it is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise _refuse(what, url, "only http and https URLs are used")
    if not url[len(scheme) + 1:].startswith("//"):
        raise _refuse(what, url, "it has no host")
    netloc = parts.netloc
    if "@" in netloc:
        raise _refuse(what, url, "it carries credentials (userinfo)")
    host, port = _split_netloc(netloc, scheme, what, url)
    return AuthUrl(scheme=scheme, host=host, port=port, path=parts.path, query=parts.query,
                   raw=url)


#: DNS limits (RFC 1035 section 2.3.4): a resolver refuses longer names and labels with an
#: error that is not a network one, so they are refused here, named.
MAX_HOST_LENGTH = 253
MAX_LABEL_LENGTH = 63


def _split_netloc(netloc: str, scheme: str, what: str, url: str) -> tuple[str, int]:
    if netloc.startswith("["):
        close = netloc.find("]")
        if close == -1:
            raise _refuse(what, url, "its IPv6 address is not closed by ']'")
        host = netloc[1:close].lower()
        rest = netloc[close + 1:]
        try:
            address = ipaddress.IPv6Address(host)
        except ValueError:
            raise _refuse(what, url, "its IPv6 address does not parse") from None
        if address.scope_id is not None:
            raise _refuse(what, url, "its IPv6 address has a zone")
        host = str(address)
        if rest and not rest.startswith(":"):
            raise _refuse(what, url, "characters follow its IPv6 address")
    else:
        host, colon, port_text = netloc.partition(":")
        rest = colon + port_text
        host = host.lower()
        if not host:
            raise _refuse(what, url, "it has no host")
        if not set(host) <= _HOST_CHARS:
            raise _refuse(what, url, "its host has characters other than letters, digits, "
                                     "'-', '.' and '_'")
        labels = host.rstrip(".").split(".")
        if len(host) > MAX_HOST_LENGTH or any(not 0 < len(label) <= MAX_LABEL_LENGTH
                                              for label in labels):
            raise _refuse(what, url, "its host name has an empty or over-long label "
                                     "(RFC 1035)")
        if _numeric_label(labels[-1]):
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                raise _refuse(what, url, "its numeric host is not a dotted-quad IPv4 "
                                         "address") from None
    if not rest:
        return host, _DEFAULT_PORTS[scheme]
    port_text = rest[1:]
    if not port_text or not port_text.isdigit() or not port_text.isascii():
        raise _refuse(what, url, "its port is not a number")
    port = int(port_text)
    if not 1 <= port <= _MAX_PORT:
        raise _refuse(what, url, "its port is out of range")
    return host, port


def _numeric_label(label: str) -> bool:
    """True for a label the WHATWG URL parser would read as an IPv4 number (``127``,
    ``0x7f``): a host ending in one is an address or nothing, never a name."""
    if label.startswith(("0x", "0X")):
        return all(c in "0123456789abcdefABCDEF" for c in label[2:])
    return label.isdigit()


#: IPv6 prefixes that carry an IPv4 address (and reach it): NAT64 (RFC 6052, and the
#: local-use 64:ff9b:1::/48 of RFC 8215) and IPv4-translated addresses in the low 32 bits,
#: 6to4 (RFC 3056) in bits 16-48.  Classified as the IPv4 address they reach.
_LOW32_PREFIXES = tuple(ipaddress.IPv6Network(n) for n in
                        ("64:ff9b::/96", "64:ff9b:1::/48", "::ffff:0:0:0/96"))
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if any(address in net for net in _LOW32_PREFIXES):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SIX_TO_FOUR:
        return ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)
    return None


def address_zone(host: str) -> str:
    """The zone of ``host`` (an IP literal, bracketed or not, or a name): ``"loopback"``
    (127/8, ::1, ``localhost``, ``*.localhost``), ``"metadata"`` (cloud metadata services),
    ``"unspecified"`` (0.0.0.0/8, ::), ``"multicast"``, ``"link-local"`` (169.254/16,
    fe80::/10), ``"private"`` (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, and every
    other address that is not globally reachable: reserved, broadcast, documentation...),
    ``"public"``, or ``"name"`` for any other DNS name.  IPv6 addresses that carry an IPv4
    one (mapped, NAT64, translated, 6to4) are classified as that IPv4 address.  Raises
    nothing."""
    text = host.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        name = text.rstrip(".")
        if name == "localhost" or name.endswith(".localhost"):
            return "loopback"
        return "name"
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            address = ipaddress.IPv6Address(text.partition("%")[0])
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            address = embedded
    if address in _METADATA:
        return "metadata"
    if address.is_unspecified or (address.version == 4 and address in _THIS_NETWORK):
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_multicast:
        return "multicast"
    if address.is_link_local:
        return "link-local"
    if any(address in net for net in _PRIVATE_NETS if net.version == address.version):
        return "private"
    if address.version == 6 and address in _IPV4_COMPATIBLE:
        return "private"
    if address.is_global:
        return "public"
    return "private"  # reserved, broadcast, shared, documentation, benchmarking...


#: Which address zones an auth exchange may reach, by the zone of the MCP server's own
#: address (R7): public addresses always; private ones from a server on a private network
#: or on this machine; this machine's own only from a server on this machine; link-local
#: only from a link-local server.  Cloud metadata services, unspecified and multicast
#: addresses never: no MCP deployment needs its authorization server there.
ALLOWED_ZONES: dict[str, frozenset[str]] = {
    "public": frozenset({"public"}),
    "private": frozenset({"public", "private"}),
    "loopback": frozenset({"public", "private", "loopback"}),
    "link-local": frozenset({"public", "link-local"}),
    "metadata": frozenset({"public"}),
    "unspecified": frozenset({"public"}),
    "multicast": frozenset({"public"}),
    "name": frozenset({"public"}),
}


def address_allowed(address: str, mcp_zone: str) -> bool:
    """Whether the flow may connect to ``address`` (a resolved IP literal) for an MCP server
    whose own address is in ``mcp_zone`` (an :func:`address_zone` value): see
    :data:`ALLOWED_ZONES`.  A host name (zone ``"name"``) is not an address and is refused:
    resolve it first.  Raises ValueError for an unknown ``mcp_zone``."""
    if mcp_zone not in _ZONES:
        raise ValueError(f"unknown address zone {mcp_zone!r}")
    return address_zone(address) in ALLOWED_ZONES[mcp_zone]


def check_url(url: str, *, what: str, mcp_zone: str, allow_http: bool = False) -> AuthUrl:
    """``url`` parsed and checked against the policy, to be used as ``what``: https unless
    its host is loopback or ``allow_http``; an IP literal or ``localhost`` host must pass
    :func:`address_allowed` for ``mcp_zone`` (names are checked by the binding once
    resolved).  Raises :class:`UnsafeUrl` (see :func:`parse_auth_url` for the parse refusals)
    and ValueError for an unknown ``mcp_zone``."""
    parsed = parse_auth_url(url, what=what)
    zone = address_zone(parsed.host)
    if parsed.scheme != "https" and zone != "loopback" and not allow_http:
        raise _refuse(what, url, "it must use https (http is allowed for loopback only)")
    if zone != "name" and not address_allowed(parsed.host, mcp_zone):
        raise _refuse(what, url, f"its address is {zone} and the MCP server's is {mcp_zone}")
    return parsed


def origin_of(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``.  Raises :class:`UnsafeUrl` if it does not parse."""
    return parse_auth_url(url, what="the URL").origin


def _server(server_url: str) -> AuthUrl:
    """The MCP server URL parsed, a fragment dropped first (it is never sent anyway)."""
    if isinstance(server_url, str):
        server_url = server_url.partition("#")[0]
    return parse_auth_url(server_url, what="the MCP server URL")


def _strip_slash(path: str) -> str:
    return path[:-1] if path.endswith("/") else path


def prm_candidates(server_url: str, header_url: str | None) -> list[str]:
    """The protected resource metadata URLs to try, in order (RFC 9728; MCP 2025-11-25): the
    challenge's ``resource_metadata`` (``header_url``, verbatim, if given), then the
    path-inserted well-known URL when the server URL has a path other than ``/``, then the
    root well-known URL; no duplicates.  The server URL's query and fragment are dropped.
    ``header_url`` is not checked here (use :func:`check_url`).  Raises :class:`UnsafeUrl`
    if ``server_url`` does not parse."""
    server = _server(server_url)
    out: list[str] = []
    if header_url is not None:
        out.append(header_url)
    path = _strip_slash(server.path)
    if path:
        out.append(f"{server.origin_url}{_PRM_WELL_KNOWN}{path}")
    out.append(f"{server.origin_url}{_PRM_WELL_KNOWN}")
    return list(dict.fromkeys(out))


def as_metadata_candidates(issuer: str) -> list[str]:
    """The authorization server metadata URLs to try for ``issuer``, in order (RFC 8414
    section 3.1, OpenID Connect Discovery section 4; MCP 2025-11-25): with a path, OAuth
    inserted, OpenID inserted, OpenID appended; without, OAuth then OpenID.  One trailing
    ``/`` of the path is ignored.  Raises :class:`UnsafeUrl` if ``issuer`` does not parse or
    has a query (an issuer has none, RFC 8414 section 2)."""
    parsed = parse_auth_url(issuer, what="the authorization server issuer")
    if parsed.query or "?" in issuer:
        raise _refuse("the authorization server issuer", issuer, "an issuer has no query")
    origin = parsed.origin_url
    path = _strip_slash(parsed.path)
    if not path:
        return [f"{origin}{_OAUTH_WELL_KNOWN}", f"{origin}{_OIDC_WELL_KNOWN}"]
    return [
        f"{origin}{_OAUTH_WELL_KNOWN}{path}",
        f"{origin}{_OIDC_WELL_KNOWN}{path}",
        f"{origin}{path}{_OIDC_WELL_KNOWN}",
    ]


def legacy_metadata_url(server_url: str) -> str:
    """The 2025-03-26 metadata URL: the MCP server's origin and
    ``/.well-known/oauth-authorization-server``.  Raises :class:`UnsafeUrl` if
    ``server_url`` does not parse."""
    return _server(server_url).origin_url + _OAUTH_WELL_KNOWN


def legacy_endpoint(server_url: str, path: str) -> str:
    """A 2025-03-26 default endpoint: the MCP server's origin and ``path`` (``/authorize``,
    ``/token``, ``/register``).  Raises :class:`UnsafeUrl` if ``server_url`` does not parse
    and ValueError if ``path`` does not start with ``/``."""
    if not path.startswith("/"):
        raise ValueError(f"an endpoint path starts with '/': {path!r}")
    return _server(server_url).origin_url + path


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether protected resource metadata naming ``resource`` is about ``server_url``
    (RFC 9728 section 3.3, with the notes' leniency): same origin (scheme and host
    case-insensitive, default ports applied) and equal paths (one trailing ``/`` ignored),
    or the resource path is a segment-boundary prefix of the server path (``/mcp`` covers
    ``/mcp/x``, not ``/mcpx``; an empty or ``/`` path covers the whole origin).  A resource
    with a query or fragment, or either URL not parsing, is no match.  Raises nothing."""
    try:
        res = parse_auth_url(resource, what="the resource")
        server = _server(server_url)
    except UnsafeUrl:
        return False
    if res.query or "?" in resource or res.origin != server.origin:
        return False
    res_path = _strip_slash(res.path)
    server_path = _strip_slash(server.path)
    return (not res_path or res_path == server_path
            or server_path.startswith(res_path + "/"))


def canonical_resource(server_url: str) -> str:
    """The canonical URI of the MCP server (MCP 2025-06-18 onwards, RFC 8707): scheme and
    host lowercased, default port dropped, query and fragment dropped, the path as written
    (no ``/`` added).  Raises :class:`UnsafeUrl` if ``server_url`` does not parse."""
    return _server(server_url).without_query
