"""The URL policy and discovery URLs of authorization (rules R3, R5, R6, R7)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto._auth_errors import UnsafeUrl
from mcp_proto.auth._urls import (
    MAX_URL_LENGTH,
    AuthUrl,
    address_allowed,
    address_zone,
    as_metadata_candidates,
    canonical_resource,
    check_url,
    legacy_endpoint,
    legacy_metadata_url,
    origin_of,
    parse_auth_url,
    prm_candidates,
    resource_matches,
)

# -- parse_auth_url --------------------------------------------------------------------------


def test_parse_fields() -> None:
    u = parse_auth_url("HTTPS://AS.Example:8443/Token?a=1", what="the token endpoint")
    assert u == AuthUrl("https", "as.example", 8443, "/Token", "a=1",
                        "HTTPS://AS.Example:8443/Token?a=1")
    assert u.origin == ("https", "as.example", 8443)
    assert u.authority == "as.example:8443"
    assert u.target == "/Token?a=1"
    assert u.without_query == "https://as.example:8443/Token"


def test_parse_defaults_and_ipv6() -> None:
    u = parse_auth_url("http://[::1]", what="x")
    assert (u.host, u.port, u.path, u.query) == ("::1", 80, "", "")
    assert u.authority == "[::1]"
    assert u.target == "/"
    assert u.without_query == "http://[::1]"
    u = parse_auth_url("https://[2001:DB8::1]:443/p", what="x")
    assert u.host == "2001:db8::1"
    assert u.authority == "[2001:db8::1]"
    assert parse_auth_url("http://a:8080", what="x").authority == "a:8080"
    assert parse_auth_url("https://a:443/", what="x").authority == "a"


@pytest.mark.parametrize("url", [
    "javascript:alert(1)",
    "data:text/html,<script>",
    "file:///etc/passwd",
    "ftp://example.com/",
    "https:example.com",
    "https:/example.com",
    "https://",
    "https:///path",
    "https://user:pw@example.com/",
    "https://user@example.com/",
    "https://example.com/#frag",
    "https://example.com/#",
    "https://example.com:/",
    "https://example.com:0/",
    "https://example.com:65536/",
    "https://example.com:8a/",
    "https://example.com:80:80/",
    "https://exa mple.com/",
    "https://example.com/a b",
    "https://example.com/\n",
    "https://example.com/\x00",
    "https://example.com/\x7f",
    "https://ex\u00e4mple.com/",
    "https://good.example\\@evil.example/",
    "https://good.example\\.evil/",
    "https://[::1/",
    "https://[::1]x/",
    "https://[fe80::1%25eth0]/",
    "https://[not-v6]/",
    "http://127.1/",
    "http://0x7f.0.0.1/",
    "http://2130706433/",
    "http://1.2.3.4.5/",
    "https://x" + "a" * MAX_URL_LENGTH,
])
def test_parse_refuses(url: str) -> None:
    with pytest.raises(UnsafeUrl) as info:
        parse_auth_url(url, what="the token endpoint")
    assert "the token endpoint" in str(info.value)


def test_parse_refuses_non_string() -> None:
    with pytest.raises(UnsafeUrl, match="the issuer"):
        parse_auth_url(None, what="the issuer")  # type: ignore[arg-type]


def test_messages_hide_query_fragment_and_password() -> None:
    with pytest.raises(UnsafeUrl) as info:
        parse_auth_url("ftp://as.example/x?code=SECRET", what="the endpoint")
    assert "SECRET" not in str(info.value) and "as.example/x" in str(info.value)
    with pytest.raises(UnsafeUrl) as info:
        parse_auth_url("https://as.example/x#access_token=SECRET", what="the endpoint")
    assert "SECRET" not in str(info.value)
    with pytest.raises(UnsafeUrl) as info:
        parse_auth_url("https://bob:SECRET@as.example/x", what="the endpoint")
    assert "SECRET" not in str(info.value) and "as.example" in str(info.value)
    with pytest.raises(UnsafeUrl) as info:
        check_url("http://as.example/x?token=SECRET", what="the endpoint", mcp_zone="public")
    assert "SECRET" not in str(info.value)


# -- zones -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "zone"), [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
    ("[::1]", "loopback"), ("localhost", "loopback"), ("LOCALHOST", "loopback"),
    ("app.localhost", "loopback"), ("localhost.", "loopback"), ("::ffff:127.0.0.1", "loopback"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"),
    ("192.168.0.1", "private"), ("100.64.0.1", "private"), ("100.127.255.255", "private"),
    ("fc00::1", "private"), ("fd12:3456::1", "private"), ("::ffff:10.0.0.1", "private"),
    ("::ffff:192.168.0.1", "private"), ("255.255.255.255", "private"), ("240.0.0.1", "private"),
    ("192.0.2.1", "private"), ("2001:db8::1", "private"), ("::1.2.3.4", "private"),
    ("169.254.1.1", "link-local"), ("fe80::1", "link-local"), ("fe80::1%eth0", "link-local"),
    ("::ffff:169.254.1.1", "link-local"),
    ("169.254.169.254", "metadata"), ("fd00:ec2::254", "metadata"),
    ("100.100.100.200", "metadata"), ("::ffff:169.254.169.254", "metadata"),
    ("0.0.0.0", "unspecified"), ("0.1.2.3", "unspecified"), ("::", "unspecified"),
    ("224.0.0.1", "multicast"), ("239.1.1.1", "multicast"), ("ff02::1", "multicast"),
    ("8.8.8.8", "public"), ("1.1.1.1", "public"), ("2606:4700:4700::1111", "public"),
    ("::ffff:8.8.8.8", "public"), ("172.32.0.1", "public"),
    ("example.com", "name"), ("localhost.example.com", "name"), ("mylocalhost", "name"),
])
def test_address_zone(host: str, zone: str) -> None:
    assert address_zone(host) == zone


@pytest.mark.parametrize(("address", "mcp_zone", "allowed"), [
    ("8.8.8.8", "public", True),
    ("10.0.0.1", "public", False),
    ("127.0.0.1", "public", False),
    ("169.254.169.254", "public", False),
    ("169.254.1.1", "public", False),
    ("::ffff:192.168.0.1", "public", False),
    ("fc00::1", "public", False),
    ("8.8.8.8", "link-local", True),
    ("10.0.0.1", "link-local", False),
    ("127.0.0.1", "loopback", True),
    ("10.0.0.1", "loopback", True),
    ("169.254.169.254", "loopback", False),  # metadata services: never
    ("fd00:ec2::254", "private", False),
    ("8.8.8.8", "loopback", True),
    ("10.0.0.1", "private", True),
    ("127.0.0.1", "private", False),  # this machine: only from a server on it
    ("169.254.1.1", "loopback", False),
    ("169.254.1.1", "link-local", True),
    ("64:ff9b::a9fe:a9fe", "loopback", False),  # NAT64 of 169.254.169.254
    ("64:ff9b::a00:1", "public", False),  # NAT64 of 10.0.0.1
    ("64:ff9b::808:808", "public", True),  # NAT64 of 8.8.8.8
    ("2002:7f00:1::1", "public", False),  # 6to4 of 127.0.0.1
    ("::ffff:0:a9fe:a9fe", "loopback", False),  # IPv4-translated 169.254.169.254
    ("0.0.0.0", "loopback", False),
    ("::", "private", False),
    ("224.0.0.1", "loopback", False),
    ("ff02::1", "public", False),
    ("example.com", "loopback", False),
    ("example.com", "public", False),
])
def test_address_allowed(address: str, mcp_zone: str, allowed: bool) -> None:
    assert address_allowed(address, mcp_zone) is allowed


def test_address_allowed_unknown_zone() -> None:
    with pytest.raises(ValueError):
        address_allowed("8.8.8.8", "internet")


# -- check_url -------------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "mcp_zone", "allow_http"), [
    ("https://as.example/token", "public", False),
    ("https://as.example/token", "loopback", False),
    ("http://127.0.0.1", "loopback", False),
    ("http://127.0.0.1:9000/token", "loopback", False),
    ("http://localhost:3000/authorize", "loopback", False),
    ("http://app.localhost/", "loopback", False),
    ("http://[::1]:8080/", "loopback", False),
    ("http://as.example/x", "public", True),
    ("http://10.0.0.5/x", "private", True),
    ("https://10.0.0.5/x", "private", False),
    ("https://8.8.8.8/", "public", False),
])
def test_check_url_accepts(url: str, mcp_zone: str, allow_http: bool) -> None:
    assert check_url(url, what="the endpoint", mcp_zone=mcp_zone, allow_http=allow_http).raw \
        == url


@pytest.mark.parametrize(("url", "mcp_zone", "allow_http"), [
    ("http://example.com/x", "public", False),
    ("http://example.com/x", "loopback", False),
    ("http://10.0.0.5/x", "private", False),
    ("https://169.254.169.254/", "public", False),
    ("https://[fd00:ec2::254]/", "public", False),
    ("https://10.0.0.1/", "public", False),
    ("https://[::ffff:10.0.0.1]/", "public", False),
    ("http://127.0.0.1/", "public", False),
    ("http://localhost/", "public", False),
    ("https://0.0.0.0/", "loopback", False),
    ("https://169.254.169.254/", "loopback", False),
    ("http://app.localhost/", "private", False),
    ("https://a..example/t", "public", False),
    ("https://" + "a" * 64 + ".example/t", "public", False),
    ("https://224.0.0.1/", "private", False),
    ("javascript:alert(1)", "loopback", True),
    ("file:///etc/passwd", "loopback", True),
])
def test_check_url_refuses(url: str, mcp_zone: str, allow_http: bool) -> None:
    with pytest.raises(UnsafeUrl, match="the endpoint"):
        check_url(url, what="the endpoint", mcp_zone=mcp_zone, allow_http=allow_http)


# -- discovery URLs --------------------------------------------------------------------------


def test_prm_candidates() -> None:
    assert prm_candidates("http://localhost:3000/mcp", None) == [
        "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        "http://localhost:3000/.well-known/oauth-protected-resource",
    ]
    assert prm_candidates("https://rs.example/mcp/", "https://rs.example/prm") == [
        "https://rs.example/prm",
        "https://rs.example/.well-known/oauth-protected-resource/mcp",
        "https://rs.example/.well-known/oauth-protected-resource",
    ]
    assert prm_candidates("https://rs.example", None) == [
        "https://rs.example/.well-known/oauth-protected-resource"]
    assert prm_candidates("https://RS.example:443/?x=1", None) == [
        "https://rs.example/.well-known/oauth-protected-resource"]
    assert prm_candidates("https://rs.example/a/b?token=1#f", None) == [
        "https://rs.example/.well-known/oauth-protected-resource/a/b",
        "https://rs.example/.well-known/oauth-protected-resource",
    ]
    header = "https://rs.example/.well-known/oauth-protected-resource/mcp"
    assert prm_candidates("https://rs.example/mcp", header) == [
        header, "https://rs.example/.well-known/oauth-protected-resource"]
    header = "https://rs.example/.well-known/oauth-protected-resource"
    assert prm_candidates("https://rs.example/", header) == [header]
    with pytest.raises(UnsafeUrl):
        prm_candidates("ftp://x/", None)


def test_as_metadata_candidates() -> None:
    assert as_metadata_candidates("https://as/tenant1") == [
        "https://as/.well-known/oauth-authorization-server/tenant1",
        "https://as/.well-known/openid-configuration/tenant1",
        "https://as/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_candidates("https://as/tenant1/") == as_metadata_candidates(
        "https://as/tenant1")
    assert as_metadata_candidates("https://as") == [
        "https://as/.well-known/oauth-authorization-server",
        "https://as/.well-known/openid-configuration",
    ]
    assert as_metadata_candidates("https://AS:443/") == as_metadata_candidates("https://as")
    assert as_metadata_candidates("http://localhost:9000/a/b")[0] == (
        "http://localhost:9000/.well-known/oauth-authorization-server/a/b")
    with pytest.raises(UnsafeUrl):
        as_metadata_candidates("https://as/?x=1")
    with pytest.raises(UnsafeUrl):
        as_metadata_candidates("https://as/#x")


def test_legacy() -> None:
    assert legacy_metadata_url("http://localhost:3000/mcp?x") == (
        "http://localhost:3000/.well-known/oauth-authorization-server")
    assert legacy_endpoint("https://RS.example:443/mcp", "/token") == "https://rs.example/token"
    assert legacy_endpoint("http://[::1]:8000/mcp", "/authorize") == "http://[::1]:8000/authorize"
    with pytest.raises(ValueError):
        legacy_endpoint("https://rs.example/mcp", "token")


def test_origin_of() -> None:
    assert origin_of("HTTPS://A.example/x") == ("https", "a.example", 443)
    assert origin_of("http://a:8080") == ("http", "a", 8080)
    with pytest.raises(UnsafeUrl):
        origin_of("mailto:x@y")


@pytest.mark.parametrize(("resource", "server", "match"), [
    ("https://rs.example/mcp", "https://rs.example/mcp", True),
    ("https://rs.example/mcp/", "https://rs.example/mcp", True),
    ("https://rs.example/mcp", "https://rs.example/mcp/", True),
    ("HTTPS://RS.EXAMPLE/mcp", "https://rs.example/mcp", True),
    ("https://rs.example:443/mcp", "https://rs.example/mcp", True),
    ("https://rs.example/mcp", "https://rs.example/mcp/x", True),
    ("https://rs.example/mcp/", "https://rs.example/mcp/x", True),
    ("https://rs.example", "https://rs.example/mcp", True),
    ("https://rs.example/", "https://rs.example/mcp/x", True),
    ("https://rs.example/mcp", "https://rs.example/mcp?session=1", True),
    ("https://rs.example/mcp", "https://rs.example/mcpx", False),
    ("https://rs.example/mcp/x", "https://rs.example/mcp", False),
    ("https://rs.example/other", "https://rs.example/mcp", False),
    ("https://rs.example/MCP", "https://rs.example/mcp", False),
    ("http://rs.example/mcp", "https://rs.example/mcp", False),
    ("https://rs.example:8443/mcp", "https://rs.example/mcp", False),
    ("https://evil.example/mcp", "https://rs.example/mcp", False),
    ("https://sub.rs.example/mcp", "https://rs.example/mcp", False),
    ("https://rs.example/mcp?x=1", "https://rs.example/mcp", False),
    ("https://rs.example/mcp?", "https://rs.example/mcp", False),
    ("https://rs.example/mcp#f", "https://rs.example/mcp", False),
    ("not a url", "https://rs.example/mcp", False),
    ("https://rs.example/mcp", "not a url", False),
    ("http://localhost:3000", "http://localhost:3000/mcp", True),
    ("http://localhost:3000/mcp", "http://LOCALHOST:3000/mcp", True),
])
def test_resource_matches(resource: str, server: str, match: bool) -> None:
    assert resource_matches(resource, server) is match


def test_resource_matches_non_string() -> None:
    assert resource_matches(None, "https://rs.example/") is False  # type: ignore[arg-type]


@pytest.mark.parametrize(("url", "canonical"), [
    ("http://localhost:3000", "http://localhost:3000"),
    ("HTTPS://MCP.Example.COM:443/MCP", "https://mcp.example.com/MCP"),
    ("https://mcp.example.com/mcp/", "https://mcp.example.com/mcp/"),
    ("https://mcp.example.com:8443/mcp?x=1#frag", "https://mcp.example.com:8443/mcp"),
    ("http://[::1]:80/mcp", "http://[::1]/mcp"),
])
def test_canonical_resource(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


# -- properties ------------------------------------------------------------------------------

labels = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_",
                 min_size=1, max_size=10)
hosts = st.one_of(
    st.lists(labels, min_size=1, max_size=3).map(".".join),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    st.sampled_from(["localhost", "LocalHost", "127.0.0.1", "[::1]"]),
)
segments = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789-._~%!$&'()*+,;=:@",
                   max_size=8)


@st.composite
def http_urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    host = draw(hosts)
    port = draw(st.none() | st.integers(1, 65535))
    path = "".join("/" + s for s in draw(st.lists(segments, max_size=4)))
    if draw(st.booleans()):
        path += "/"
    query = draw(st.none() | st.text(alphabet="abc=&/?:", max_size=10))
    url = f"{scheme}://{host}" + (f":{port}" if port is not None else "") + path
    return url + (f"?{query}" if query is not None else "")


@settings(max_examples=300)
@given(http_urls())
def test_canonical_resource_idempotent(url: str) -> None:
    canonical = canonical_resource(url)
    assert canonical_resource(canonical) == canonical
    assert "?" not in canonical and "#" not in canonical
    assert origin_of(canonical) == origin_of(url)


@settings(max_examples=300)
@given(http_urls())
def test_canonical_resource_matches(url: str) -> None:
    assert resource_matches(canonical_resource(url), url)


@settings(max_examples=300)
@given(st.text(max_size=60))
def test_parsers_raise_only_unsafe_url(text: str) -> None:
    try:
        parse_auth_url(text, what="x")
    except UnsafeUrl:
        pass
    assert resource_matches(text, "https://rs.example/") in (True, False)
    address_zone(text)
