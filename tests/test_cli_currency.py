"""``mcp-proto`` and URL-mode elicitation (issue 25): the URL is printed for the user to open,
with its site apart; a terminal is asked; without one the answer is a decline; the command
never opens anything."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from mcp_proto_io.cli import main
from mcp_proto_io.cli._elicit import TerminalUrlElicitation

from mcp_proto import UrlElicitation

SERVER = str(Path(__file__).parent / "servers" / "currency_scripted.py")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def elicitation(url: str = "https://auth.example/consent", *, host: str = "auth.example",
                punycode: bool = False) -> UrlElicitation:
    return UrlElicitation(message="Sign in to continue\n  please", url=url, elicitation_id="e1",
                          origin="https://" + host, host=host, punycode=punycode,
                          server="billing")


@pytest.mark.parametrize(("typed", "answer"), [("\n", "accept"), ("y\n", "accept"),
                                               ("n\n", "decline"), ("c\n", "cancel"),
                                               ("what\n", "decline"), ("", "cancel")])
def test_a_terminal_is_asked_and_the_url_shown_whole(typed: str, answer: str) -> None:
    err = io.StringIO()
    assert TerminalUrlElicitation(err, Tty(typed))(elicitation()) == answer
    shown = err.getvalue()
    assert "billing asks you to open a URL" in shown
    assert "URL:  https://auth.example/consent" in shown and "site: auth.example" in shown
    assert "Sign in to continue please" in shown  # the message on one line
    assert "never opens links" in shown


def test_without_a_terminal_it_declines_and_a_punycode_site_is_flagged() -> None:
    err = io.StringIO()
    handler = TerminalUrlElicitation(err, io.StringIO("y\n"))
    got = handler(elicitation("https://xn--80ak6aa92e.com/", host="\u0430pple.com",
                              punycode=True))
    assert got == "decline"
    assert "punycode" in err.getvalue() and "declined" in err.getvalue()


_CONTROLS = [chr(c) for c in (*range(0x20), *range(0x7f, 0xa0))]
_BIDI = ["\u200e", "\u200f", *map(chr, range(0x202a, 0x202f)), *map(chr, range(0x2066, 0x206a))]


def test_server_text_reaches_the_terminal_without_controls_or_bidi_marks() -> None:
    err = io.StringIO()
    asked = UrlElicitation(
        message="Sign\x1b[2J in\x9b31m\x07 at \u202egpj.exe\u202c now\x00\x7f\u2066x\u2069",
        url="https://auth.example/consent", elicitation_id="e1", origin="https://auth.example",
        host="auth.example", punycode=False, server="bill\x1b]0;owned\x07ing\u200f")
    assert TerminalUrlElicitation(err, io.StringIO())(asked) == "decline"
    shown = err.getvalue()
    assert not any(c in shown for c in _CONTROLS + _BIDI if c != "\n")
    assert "bill ]0;owned ing asks you to open a URL" in shown
    assert "  Sign [2J in 31m at gpj.exe now x\n" in shown
    bare = UrlElicitation(message="\x1b\u202e", url="https://a.example/", elicitation_id="e",
                          origin="https://a.example", host="a.example", punycode=False,
                          server="\u200e\x00")
    TerminalUrlElicitation(err := io.StringIO(), io.StringIO())(bare)
    assert err.getvalue().startswith("the server asks you to open a URL in your browser:\n"
                                      "  URL:  https://a.example/\n")


def test_minus_32042_on_the_command_line_names_the_url_and_exits_1(
        capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    code = main(["call", "needs_url", "--args", json.dumps({"key": "cli"}), "--",
                 sys.executable, SERVER], out=out)
    err = capsys.readouterr().err
    assert code == 1
    assert "asks you to open a URL" in err and "https://auth.example/cli/0" in err
    assert "(no terminal to ask: declined)" in err
    assert "needs you to open a URL first" in err and out.getvalue() == ""
