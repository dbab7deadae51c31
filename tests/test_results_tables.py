"""The depth tables of the results READMEs are the committed reports' own numbers.

Every table in docs/results/README.md and second-edition/README.md whose header begins
`| | d1` (a language per row, a depth per column) must follow a
`<!-- compact_table.py ARGS -->` comment and equal, line for line, what
`python docs/results/compact_table.py ARGS` prints from the committed report.json. A number
typed by hand, or left behind when a report is regenerated, fails here.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
MARKER = re.compile(r"^<!-- compact_table\.py (?P<args>.+?) -->$")
# The current editions' READMEs. h100-20-epochs/ is the superseded first 20-epoch run, kept as it
# was: only its cells.csv was committed, not a report.json to regenerate its tables from.
READMES = [RESULTS / "README.md", RESULTS / "second-edition" / "README.md"]


spec = importlib.util.spec_from_file_location("compact_table", RESULTS / "compact_table.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def expected_table(args: str) -> str:
    """What `python docs/results/compact_table.py ARGS` prints, run from the repository root."""
    parsed = script.arguments(shlex.split(args))
    return script.compact_table(ROOT / parsed.report_dir, parsed.posenc, parsed.bin_name)


def depth_tables(path: Path) -> list[tuple[int, str | None, str]]:
    """(line number, the marker's arguments or None, the table's text) of each depth table."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for number, line in enumerate(lines):
        if not line.startswith("| | d1 |") or (number and lines[number - 1].startswith("|")):
            continue
        before = next((lines[i] for i in range(number - 1, -1, -1) if lines[i].strip()), "")
        marker = MARKER.match(before)
        end = number
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        found.append((number + 1, marker["args"] if marker else None,
                      "\n".join(lines[number:end]) + "\n"))
    return found


TABLES = [(readme, *table) for readme in READMES for table in depth_tables(readme)]


def test_the_results_readmes_have_depth_tables():
    assert len(TABLES) >= 8, [str(readme) for readme in READMES]


@pytest.mark.parametrize("readme,line,args,table", TABLES,
                         ids=[f"{r.relative_to(RESULTS)}:{line}" for r, line, _, _ in TABLES])
def test_each_depth_table_is_the_reports_own(readme, line, args, table):
    where = f"{readme.relative_to(ROOT)}:{line}"
    assert args is not None, f"{where}: a depth table without a <!-- compact_table.py ... --> line"
    assert table == expected_table(args), f"{where}: differs from compact_table.py {args}"


def test_a_changed_number_is_caught(tmp_path):
    readme = RESULTS / "second-edition" / "README.md"
    line, args, table = depth_tables(readme)[0]
    edited = tmp_path / "README.md"
    changed = table.replace("(3; 0)", "(3; 1)", 1)
    assert changed != table
    edited.write_text(f"<!-- compact_table.py {args} -->\n{changed}", encoding="utf-8")
    [(_, same_args, read_back)] = depth_tables(edited)
    assert same_args == args and read_back == changed
    assert read_back != expected_table(args)
