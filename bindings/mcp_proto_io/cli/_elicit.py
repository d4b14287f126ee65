"""URL-mode elicitations on the terminal: shown for the user to open, never opened here.

A server that needs the user in a browser (an OAuth consent, a payment) sends a URL-mode
elicitation (2025-11-25, F-04).  :class:`TerminalUrlElicitation` prints which server asks,
its message, the full URL and, apart, the site it leads to (with a warning for an
internationalized name, which can imitate another), then asks whether the user will open
it.  Without a terminal to ask, it declines: consent needs a person.  The answer is consent
only; the outcome reaches the server out of band.
"""

from __future__ import annotations

import threading
from typing import TextIO

from mcp_proto import UrlElicitation

from ._watch import isatty

__all__ = ["MAX_SHOWN_MESSAGE", "TerminalUrlElicitation"]

#: The longest server message shown (the rest is cut: the URL is what matters).
MAX_SHOWN_MESSAGE = 500

_ANSWERS = {"": "accept", "y": "accept", "yes": "accept", "n": "decline", "no": "decline",
            "c": "cancel", "cancel": "cancel"}


class TerminalUrlElicitation:
    """The CLI's ``on_url_elicitation``: prints to ``err``, reads the answer from ``inp``
    (one question at a time, whichever server thread asks)."""

    def __init__(self, err: TextIO, inp: TextIO) -> None:
        self._err = err
        self._inp = inp
        self._lock = threading.Lock()

    def __call__(self, elicitation: UrlElicitation) -> str:
        with self._lock:
            err = self._err
            server = elicitation.server or "the server"
            message = " ".join(elicitation.message.split())[:MAX_SHOWN_MESSAGE]
            lines = [f"{server} asks you to open a URL in your browser:",
                     f"  {message}" if message else None,
                     f"  URL:  {elicitation.url}",
                     f"  site: {elicitation.host}  ({elicitation.origin})"]
            if elicitation.punycode:
                lines.append("  warning: the site's name is internationalized (punycode); "
                             "check it is the one you expect")
            lines.append("  mcp-proto never opens links: open it yourself if you agree.")
            err.write("\n".join(line for line in lines if line is not None) + "\n")
            if not isatty(self._inp):
                err.write("  (no terminal to ask: declined)\n")
                err.flush()
                return "decline"
            err.write("  Will you open it? [Y]es / [n]o / [c]ancel: ")
            err.flush()
            answer = self._inp.readline()
            if not answer:  # end of input
                return "cancel"
            return _ANSWERS.get(answer.strip().lower(), "decline")
