"""docs/results/third-edition/device-h200/device.sh, the lease driver, in its dry mode: every
sweep a plan starts names the seeds it was meant to (the sixth lease passed ``--seeds 2``, a
count, for seed 2), with one worker per seed for the k - 2 sweeps, for every plan."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from crasp.train.sweep.axes import parse_seeds

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "docs" / "results" / "third-edition" / "device-h200" / "device.sh"
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def planned(tmp_path: Path, **variables: str) -> list[list[str]]:
    """The sweeps the driver would start: (name, function, workers, directory, arguments...)."""
    environment = {"PATH": "/usr/bin:/bin", "DRY_RUN": "1", "B": str(tmp_path / "b"),
                   "OUT": str(tmp_path / "out"), **variables}
    result = subprocess.run(["bash", str(DRIVER)], cwd=ROOT, env=environment,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return sorted(shlex.split(line) for line in result.stdout.splitlines())


def option(words: list[str], name: str) -> str:
    return words[words.index(name) + 1]


@pytest.mark.parametrize("k2,expected", [
    ("L8:2", {"L8": [2]}), ("L8:2,3", {"L8": [2, 3]}), ("L7:1 L8:0,4", {"L7": [1], "L8": [0, 4]}),
    ("L7:1:3", {"L7": [1, 2, 3]})])
def test_the_k_minus_2_sweeps_run_the_seeds_paper_k2_names(tmp_path, k2, expected):
    sweeps = [words for words in planned(tmp_path, PLAN="paper", PAPER_K2=k2)
              if words[0].startswith("paper-grid-k2-")]
    seeds = {option(words, "--languages"): parse_seeds(option(words, "--seeds"))
             for words in sweeps}
    assert seeds == expected
    for words in sweeps:
        if ":" not in k2.split(":", 1)[1]:   # a list: one worker per seed
            assert int(words[2]) == len(parse_seeds(option(words, "--seeds")))


@pytest.mark.parametrize("plan", ["first", "next", "paper"])
def test_every_plan_passes_seeds_the_sweep_reads(tmp_path, plan):
    sweeps = planned(tmp_path, PLAN=plan)
    assert sweeps
    for words in sweeps:
        seeds = parse_seeds(option(words, "--seeds"))
        assert seeds and all(seed >= 0 for seed in seeds)
    assert not (tmp_path / "b" / "w").exists() or not any((tmp_path / "b" / "w").iterdir())


def test_the_split_plan_runs_every_cell_of_the_papers_grid_not_yet_recorded(tmp_path):
    """PLAN=split: the cells its sweeps name that the committed records have not finished are
    exactly the paper's grid (L6..L8, depths k - 3..k, seeds 0..4) less the finished cells."""
    from crasp.train.sweep.axes import parse_int_range

    records = ROOT / "docs" / "results" / "third-edition" / "records" / "paper-grid" / "cells"
    finished = {(cell.name.split("-")[0], int(cell.name.split("-")[1][1:]),
                 int(cell.name.split("-")[3][1:]))
                for cell in records.glob("*/") if (cell / "results.json").is_file()}
    grid = {(f"L{k}", depth, seed) for k in (6, 7, 8) for depth in range(k - 3, k + 1)
            for seed in range(5)}
    assert finished <= grid
    planned_cells = set()
    for words in planned(tmp_path, PLAN="split"):
        assert words[1] == "split" and "--split-trials" in words
        assert option(words, "--search") == "paper" and option(words, "--preset") == "knee-deep"
        planned_cells |= {(option(words, "--languages"), depth, seed)
                          for depth in parse_int_range(option(words, "--depths"))
                          for seed in parse_seeds(option(words, "--seeds"))}
    assert planned_cells - finished == grid - finished
