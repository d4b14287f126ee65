"""URL-mode elicitations on the terminal: shown for the user to open, never opened here.

A server that needs the user in a browser (an OAuth consent, a payment) sends a URL-mode
elicitation (2025-11-25, F-04).  :class:`TerminalUrlElicitation` prints which server asks,
its message, the full URL and, apart, the site it leads to (with a warning for an
internationalized name, which can imitate another), then asks whether the user will open
it.  Without a terminal to ask, it declines: consent needs a person.  The answer is consent
only; the outcome reaches the server out of band.
"""

from __future__ import annotations

import re
import threading
from typing import TextIO

from mcp_proto import UrlElicitation

from ._watch import isatty

__all__ = ["MAX_SHOWN_MESSAGE", "TerminalUrlElicitation"]

#: The longest server message shown (the rest is cut: the URL is what matters).
MAX_SHOWN_MESSAGE = 500

#: What never reaches the terminal from server text: C0 controls (an escape sequence can
#: rewrite the screen), DEL and the C1 controls (``\x9b`` is a CSI on some terminals)...
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
#: ... and the bidirectional controls, which can make a line read in another order than
#: written (the URL never holds one: the core refuses it).
_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")

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
            server = _showable(elicitation.server or "") or "the server"
            message = _showable(elicitation.message)[:MAX_SHOWN_MESSAGE]
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


def _showable(text: str) -> str:
    """``text`` on one line, with nothing a terminal would obey rather than show: control
    characters become spaces (runs of spaces one), bidirectional controls are dropped."""
    return " ".join(_CONTROLS.sub(" ", _BIDI.sub("", text)).split())
