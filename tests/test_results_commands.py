"""Every one-line ``$ python3 -c "..."`` the results pages quote prints what they show under
it: the numbers beside such a command come from it (run on the committed files)."""

from __future__ import annotations

import collections
import json
import re
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


def per_configuration(path: Path) -> list[str]:
    """What the third-edition README's per-configuration command prints for a metrics file:
    per configuration (trial), its epochs, their seconds and its best validation."""
    trials = collections.defaultdict(list)
    for line in path.read_text().splitlines():
        row = json.loads(line)
        trials[row["trial"]].append(row)
    return [f"{trial} {len(rows)} {round(sum(r['epoch_time_s'] for r in rows), 1)} "
            f"{max(r['val_exact_match'] for r in rows)}" for trial, rows in trials.items()]


def test_every_quoted_per_configuration_line_is_that_commands_output_on_a_committed_file():
    """The README quotes the command's lines inline (`0 25 552.4 0.45`): each must be one it
    prints for some metrics file committed under third-edition/ (a line quoted before a run
    went on, and not updated, is not)."""
    third = ROOT / "docs" / "results" / "third-edition"
    quoted = re.findall(r"`(\d+ \d+ [\d.]+ [\d.]+)`",
                        (third / "README.md").read_text(encoding="utf-8"))
    printed = {line for path in third.rglob("*.jsonl") for line in per_configuration(path)}
    assert len(quoted) >= 20 and [line for line in quoted if line not in printed] == []
