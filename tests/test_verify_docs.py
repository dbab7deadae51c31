"""docs/verification.md shows real output: every ``crasp equiv`` and ``crasp check`` there is
run again, in document order, and prints what the document shows (timings aside)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from crasp.cli import cli
import test_docs_commands
from test_docs_commands import CHECKOUT, FILE_WRITE

scratch = test_docs_commands.scratch   # the fixture, shared with the docs test

DOCUMENT = CHECKOUT / "docs" / "verification.md"
TIMING = re.compile(r"\d+\.\d+ s\b")


def shown_commands(text: str) -> list[tuple[str, list[str]]]:
    """(command line, the output lines the document shows under it), for every ``$`` line of
    a code block; output ends at the next ``$`` line, the block's end or an ``(exit status``
    line."""
    found, block, current = [], False, None
    for line in text.splitlines():
        if line.startswith("```"):
            block, current = not block, None
            continue
        if not block:
            continue
        if line.startswith("$ "):
            current = (line[2:], [])
            found.append(current)
        elif current is not None and not line.startswith("(exit status"):
            current[1].append(line)
    return found


def test_the_verification_document_shows_what_the_commands_print(scratch):
    runner = CliRunner()
    compared = 0
    for command, shown in shown_commands(DOCUMENT.read_text(encoding="utf-8")):
        written = FILE_WRITE.match("$ " + command)
        if written:
            Path(written[2]).write_text(written[1].encode().decode("unicode_escape"))
            continue
        words = shlex.split(command)
        if "--max-memory" in words:   # z3's budget counts the whole process: a fresh one
            output = subprocess.run([sys.executable, "-m", "crasp", *words[1:]],
                                    capture_output=True, text=True).stdout
        else:
            output = runner.invoke(cli, words[1:], catch_exceptions=False).output
        if words[1] not in ("equiv", "check"):
            continue
        printed = [TIMING.sub("_ s", line) for line in output.splitlines()]
        assert printed == [TIMING.sub("_ s", line) for line in shown], command
        compared += 1
    assert compared >= 7
