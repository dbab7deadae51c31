"""crasp report's seed counts and fragile marks (crasp.train.report.seed_counts) on synthetic
sweeps: every count and mark checked against a brute force that moves one string at a time."""

from __future__ import annotations

import json
from fractions import Fraction

from hypothesis import given, settings, strategies as st

from crasp.train import report as rep
from crasp.train.report.aggregate import aggregate
from crasp.train.report.loading import CellResult
from crasp.train.report.seed_counts import count_text, seed_counts
from crasp.train.results import BinScore, RunResults

import test_report as synthetic


def cell(language: str, depth: int, seed: int, correct: int, strings: int) -> CellResult:
    bins = {"351:400": BinScore(exact_match=correct / strings, token_accuracy=1.0, n=strings)}
    config = {"language": language, "depth": depth, "posenc": "nope", "seed": seed}
    return CellResult(f"{language}-d{depth}-s{seed}", "sweep", None, config, {},
                      RunResults(bins=bins, val_exact_match=1.0, config=config))


def succeeds(correct: int, strings: int, threshold: float) -> bool:
    return correct / strings >= threshold


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([0.99, 0.95, 1.0, 0.5]), st.integers(1, 600),
       st.lists(st.integers(0, 10**6), min_size=1, max_size=7))
def test_counts_and_fragile_marks_match_moving_one_string(threshold, strings, draws):
    corrects = [draw % (strings + 1) for draw in draws]
    cells = [cell("L6", 3, seed, correct, strings) for seed, correct in enumerate(corrects)]
    [entry] = seed_counts(cells, aggregate(cells, threshold), threshold)
    total = len(corrects)
    now = [succeeds(c, strings, threshold) for c in corrects]
    assert entry["successes"] == sum(now) and entry["seeds_run"] == total
    assert entry["text"] == f"{sum(now)} of {total}"
    # brute force: every count one string away (one seed, one string more or less right)
    neighbours = []
    for seed, correct in enumerate(corrects):
        for moved in (correct - 1, correct + 1):
            if 0 <= moved <= strings and succeeds(moved, strings, threshold) != now[seed]:
                neighbours.append((seed, sum(now) + (1 if not now[seed] else -1)))
    assert {s["seed"] for s in entry["fragile_seeds"]} == {seed for seed, _ in neighbours}
    assert entry["fragile"] == bool(neighbours)
    assert entry["majority"] == (2 * sum(now) > total)
    assert entry["majority_fragile"] == any((2 * n > total) != entry["majority"]
                                            for _, n in neighbours)
    assert entry["all_fragile"] == any((n == total) != entry["all"] for _, n in neighbours)
    # the exact arithmetic, not floats: a fragile success has (c - 1)/n below the threshold
    for seed in entry["fragile_seeds"]:
        c, n = seed["correct"], seed["strings"]
        step = Fraction(c - 1 if seed["succeeds"] else c + 1, n)
        assert (step >= Fraction(threshold).limit_denominator(10**6)) != seed["succeeds"]


def test_the_issue_example_one_string_from_a_tie():
    """L7 d4 four heads: 3 of 5 seeds, one at exactly 99.0% of 500 strings (495 right)."""
    corrects = [495, 500, 499, 300, 120]
    cells = [cell("L7", 4, seed, c, 500) for seed, c in enumerate(corrects)]
    [entry] = seed_counts(cells, aggregate(cells, 0.99), 0.99)
    assert entry["text"] == "3 of 5" and entry["majority"]
    assert [s["seed"] for s in entry["fragile_seeds"]] == [0]
    assert entry["majority_fragile"] and not entry["all_fragile"]
    assert count_text(entry) == "3/5‡"
    # 4 of 5 with the same fragile seed: the count moves, the majority does not
    cells[3] = cell("L7", 4, 3, 497, 500)
    [entry] = seed_counts(cells, aggregate(cells, 0.99), 0.99)
    assert entry["text"] == "4 of 5" and entry["fragile"] and not entry["majority_fragile"]
    assert count_text(entry) == "4/5†"
    cells[0] = cell("L7", 4, 0, 498, 500)
    [entry] = seed_counts(cells, aggregate(cells, 0.99), 0.99)
    assert not entry["fragile"] and count_text(entry) == "4/5"


def test_report_files_carry_the_counts(tmp_path):
    synthetic.synthetic(tmp_path / "sweep")
    report = rep.build_report([tmp_path / "sweep"], compiled_fn=synthetic.fake_compiled)
    rep.write_report(report, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    counts = {(c["posenc"], c["language"], c["depth"]): c for c in data["seed_counts"]}
    # L5 d2: seeds 0 and 1 at 100%, seed 2 at 40% of 8 strings: at 8 strings every success
    # is one string from 87.5%, so both successes are fragile and so is the majority
    l5 = counts["nope", "L5", 2]
    assert l5["text"] == "2 of 3" and l5["majority_fragile"]
    assert [s["seed"] for s in l5["fragile_seeds"]] == [0, 1]
    assert counts["nope", "L4", 1]["setting"] == {"lr": 1e-3}
    assert counts["nope", "L4", 1]["successes"] == 0
    assert len(counts) == sum(len(ds) for langs in report.table.values() for ds in langs.values())
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| L5 | 0/3 | 2/3‡ | 3/3‡ |" in markdown
    assert data["search_choices"] == []
