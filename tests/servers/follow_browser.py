"""A stand-in browser for the login tests: ``BROWSER="python follow_browser.py %s &"``.

It GETs the authorization URL without following redirects (the scripted authorization server
answers at once with a redirect to the callback), then GETs that callback URL, which is the
CLI's loopback listener.  Each request is bounded by a timeout.
"""

from __future__ import annotations

import http.client
import sys
from urllib.parse import urljoin, urlsplit

TIMEOUT = 10.0


def get(url: str) -> tuple[int, str | None]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
    try:
        target = parts.path + ("?" + parts.query if parts.query else "")
        conn.request("GET", target or "/", headers={"Host": parts.netloc})
        response = conn.getresponse()
        return response.status, response.getheader("Location")
    finally:
        conn.close()


def main() -> int:
    url = sys.argv[1]
    status, location = get(url)
    if location is None:
        print(f"follow_browser: HTTP {status} without Location", file=sys.stderr)
        return 1
    get(urljoin(url, location))
    return 0


if __name__ == "__main__":
    sys.exit(main())
