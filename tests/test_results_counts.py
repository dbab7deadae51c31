"""The counts the results READMEs quote from docs/results/counts.py are that script's output on
the committed reports: the fragile-count table, the distribution survivals, the cells below the
proved bounds, the training hours and the means the audit of issue 33 recomputed."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SECOND = RESULTS / "second-edition"
FAMILIES = ["one-head", "four-head", "ek-nope", "pe"]

spec = importlib.util.spec_from_file_location("counts", RESULTS / "counts.py")
counts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(counts)

README = (RESULTS / "README.md").read_text(encoding="utf-8")
SECOND_README = (SECOND / "README.md").read_text(encoding="utf-8")


def test_every_fragile_count_is_in_the_second_editions_table():
    entries = [entry for family in FAMILIES
               for entry in counts.report(str(SECOND / family))["seed_counts"]
               if entry["fragile"]]
    section = SECOND_README.split("## Fragile counts", 1)[1]
    table = section[section.index("| family"):].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines()[2:]]
    assert len(rows) == len(entries)
    for entry, row in zip(entries, rows):
        seed = entry["fragile_seeds"][0]
        assert f"| {entry['language']} d{entry['depth']} | {entry['text']} |" in row, row
        assert f"s{seed['seed']}, {seed['correct']} of {seed['strings']}" in row, row
        verdict = ("the majority" if entry["majority_fragile"]
                   else "every seed" if entry["all_fragile"] else "the count only")
        assert verdict in row, row


@pytest.mark.parametrize("family, leave_out", [("one-head", "L3"), ("four-head", "L3")])
def test_distribution_survivals_are_quoted_as_computed(family, leave_out):
    lines = counts.distributions(str(SECOND / family), [leave_out])
    found = {(line.split()[1].rstrip(":"), "without" in line): re.search(r"(\d+) of (\d+)", line).groups()
             for line in lines}
    skewed, extreme = found["351:400@skewed", False], found["351:400@extreme", False]
    assert skewed[1] == extreme[1]
    quoted = f"{skewed[0]} and {extreme[0]} of {skewed[1]}"
    quoted_rest = (f"{found['351:400@skewed', True][0]} and "
                   f"{found['351:400@extreme', True][0]} of {found['351:400@skewed', True][1]}")
    text = README + SECOND_README
    assert quoted in text or f"{skewed[0]} succeed on skewed and {extreme[0]} on extreme of " \
        f"{skewed[1]}" in text
    assert quoted_rest in text


def test_ek_cells_below_the_bounds_are_quoted_as_computed():
    total = counts.below(str(SECOND / "ek-nope"))[-1]
    bound, k2 = re.findall(r"(\d+) of (\d+)", total)
    assert bound == ("0", "23") and k2 == ("0", "18")
    for text in (README, SECOND_README):
        assert "18\n  of the 23 are below k − 2" in text or "18 of the 23 are below k − 2" in text


def test_hours_and_means_are_quoted_as_computed():
    [hours] = counts.hours(str(SECOND / "four-head" / "cells.csv"), "0:2")
    assert hours.startswith("108 cells") and "2.65 h" in hours and "2.65 h" in README
    six = counts.means(str(RESULTS / "cells.csv"), ["L5:2", "L6:3"])
    twenty = counts.means(str(RESULTS / "h100-20-epochs" / "cells.csv"), ["L5:2", "L6:3"])
    values = [line.split(": ")[1].split("%")[0] for line in six + twenty]
    assert values == ["42.5", "53.9", "70.7", "85.0"]
    flat = " ".join(README.split())
    assert "from 42.5% to 70.7% mean, as much as L6 depth 3, from 53.9% to 85.0%" in flat
