"""Every one-line ``$ python3 -c "..."`` the results pages quote prints what they show under
it: the numbers beside such a command come from it (run on the committed files)."""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs" / "results").rglob("*.md"))
PROMPT = "$ python3 -c "


def quoted_commands() -> list[tuple[str, str, list[str]]]:
    """(page, command line, the lines shown under it up to the block's end or the next $)."""
    found = []
    for page in PAGES:
        for block in page.read_text(encoding="utf-8").split("```")[1::2]:
            lines = textwrap.dedent(block).strip("\n").splitlines()
            for index, line in enumerate(lines):
                if line.startswith(PROMPT):
                    shown = []
                    for after in lines[index + 1:]:
                        if after.startswith("$ "):
                            break
                        shown.append(after)
                    found.append((page.relative_to(ROOT).as_posix(), line, shown))
    return found


COMMANDS = quoted_commands()


def test_the_pages_quote_some():
    assert len(COMMANDS) >= 4


@pytest.mark.parametrize("page,command,shown", COMMANDS,
                         ids=[f"{page}:{n}" for n, (page, _, _) in enumerate(COMMANDS)])
def test_a_quoted_command_prints_what_the_page_shows(page, command, shown):
    words = shlex.split(command[2:])
    assert words[:2] == ["python3", "-c"] and len(words) == 3, command
    result = subprocess.run([sys.executable, "-c", words[2]], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n").splitlines() == shown, (page, command)
