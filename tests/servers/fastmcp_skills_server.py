"""A FastMCP server that serves a directory of skills through the Skills extension (SEP-2640,
fastmcp's ``SkillsExtension`` over ``SkillsDirectoryProvider``): the third-party peer for the
client's skills API.

Run: ``python fastmcp_skills_server.py SKILLS_DIR`` (stdio).  Every folder of ``SKILLS_DIR``
with a ``SKILL.md`` is a skill; fastmcp publishes ``skills/list``, ``skills/get``, the skill
files as ``skill://`` resources, and ``resources/directory/read``.  fastmcp serves the
extension's methods in the 2026-07-28 era only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension

server = FastMCP("fastmcp-skills-server")
provider = SkillsDirectoryProvider(roots=Path(sys.argv[1]), experimental_skills=True)
server.add_provider(provider)
server.add_extension(SkillsExtension(providers=[provider]))


@server.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run(show_banner=False)
