"""docs/extraction.md's tables are the committed results' own numbers.

Every table of the study (between `<!-- table:NAME -->` markers) must equal what
`python docs/extraction/tables.py` regenerates from docs/extraction/results.json, and every
program the results name must be committed beside them, with the depth the results record.
A number typed by hand, or left behind when the study is rerun, fails here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import crasp
from crasp.depth import depth_of

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "docs" / "extraction"

spec = importlib.util.spec_from_file_location("extraction_tables", STUDY / "tables.py")
tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tables)

RUNS = tables.load()


def test_every_table_of_the_study_is_regenerated_from_the_results():
    document = tables.DOC.read_text(encoding="utf-8")
    names = [match["name"] for match in tables.BLOCK.finditer(document)]
    assert sorted(names) == sorted(tables.TABLES)
    assert tables.regenerated(document, RUNS) == document


def test_a_changed_result_changes_a_table():
    document = tables.DOC.read_text(encoding="utf-8")
    changed = [dict(run) for run in RUNS]
    changed[0]["success"] = not changed[0]["success"]
    assert tables.regenerated(document, changed) != document


def test_the_study_covers_every_cell_with_three_seeds_in_both_classes():
    cells = {}
    for run in RUNS:
        key = (run["language"], run["depth"], bool(run["precision"]))
        cells.setdefault(key, set()).add(run["seed"])
    expected = {(language, depth, fixed) for language, theory in tables.THEORY_DEPTH.items()
                for depth in (theory, theory + 1) for fixed in (False, True)}
    assert set(cells) == expected
    assert all(seeds == {0, 1, 2} for seeds in cells.values())


def test_success_is_the_reports_threshold_on_the_test_bin():
    for run in RUNS:
        assert run["success"] == (run["exact_match"] >= 0.99), run["run"]


def written_programs() -> list[tuple[Path, dict, dict]]:
    """(program, run, its step's report) of every step that wrote a program."""
    found = []
    for run in RUNS:
        for step in (run["step"], run.get("step_at_class_precision")):
            if step and step["outcome"] == "ok":
                found.append((ROOT / step["command"].split(" -o ")[1].split()[0], run, step))
    return found


def test_the_programs_are_committed_with_the_depths_recorded():
    written = written_programs()
    assert written
    for path, run, step in written:
        assert path.is_file() and path.parent == STUDY / "programs", path
        assert path.name.startswith(run["run"])
        assert step["depth_check"]["depth"] <= run["depth"]
    path, _, step = min(written, key=lambda found: found[0].stat().st_size)
    assert depth_of(crasp.load_program(path)) == step["depth_check"]["depth"]
