"""The client's capability object (section 3.2), built from what the host can answer."""

from __future__ import annotations

from typing import Any

__all__ = ["client_capabilities"]


def client_capabilities(*, sampling: bool = False, elicitation: bool = False,
                        roots: bool = False, url_elicitation: bool = False) -> dict[str, Any]:
    """The ``capabilities`` wire object for a host that answers the given server requests.

    Elicitation is declared per mode (F-03): ``form`` for a host with a form handler
    (``elicitation``), ``url`` for one that shows URLs for the user to open out of band
    (``url_elicitation``); a request in a mode not declared is refused by the core.  Roots
    are declared with ``listChanged`` because every binding can send that notification.
    """
    caps: dict[str, Any] = {}
    if sampling:
        caps["sampling"] = {}
    if elicitation or url_elicitation:
        modes: dict[str, Any] = {}
        if elicitation:
            modes["form"] = {}
        if url_elicitation:
            modes["url"] = {}
        caps["elicitation"] = modes
    if roots:
        caps["roots"] = {"listChanged": True}
    return caps
