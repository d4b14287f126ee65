"""The client's capability object (section 3.2), built from what the host can answer."""

from __future__ import annotations

from typing import Any

__all__ = ["client_capabilities"]


def client_capabilities(*, sampling: bool = False, elicitation: bool = False,
                        roots: bool = False) -> dict[str, Any]:
    """The ``capabilities`` wire object for a host that answers the given server requests.

    Elicitation is declared in form mode (F-03: ``{"form": {}}``; URL mode needs a UI that
    opens links out of band, which the host must opt into by building its own object).  Roots
    are declared with ``listChanged`` because every binding can send that notification.
    """
    caps: dict[str, Any] = {}
    if sampling:
        caps["sampling"] = {}
    if elicitation:
        caps["elicitation"] = {"form": {}}
    if roots:
        caps["roots"] = {"listChanged": True}
    return caps
