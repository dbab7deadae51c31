"""The counts the results READMEs quote from docs/results/counts.py are that script's output on
the committed reports: the fragile-count table, the distribution survivals, the cells below the
proved bounds, the training hours and the means the audit of issue 33 recomputed."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SECOND = RESULTS / "second-edition"
FAMILIES = ["one-head", "four-head", "ek-nope", "pe"]

def script(relative: str):
    """The results script at RESULTS / ``relative``, imported as a module."""
    path = RESULTS / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


counts = script("counts.py")

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
    found = {(line.split()[1].rstrip(":"), "without" in line):
             re.search(r"(\d+) of (\d+)", line).groups()
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


ROOT_DOCS = [ROOT / "docs" / "train.md", RESULTS / "third-edition" / "README.md",
             RESULTS / "README.md", RESULTS / "h100-20-epochs" / "README.md"]
SETTINGS_PROMPT = "$ python docs/results/counts.py settings "


def quoted_settings_blocks() -> list[tuple[str, list[str], list[str]]]:
    """(file name, the command's arguments, the lines under it) of every fenced block in the
    docs that starts with a `counts.py settings` command line."""
    blocks = []
    for path in ROOT_DOCS:
        for block in path.read_text(encoding="utf-8").split("```")[1::2]:
            lines = textwrap.dedent(block.rstrip(" ")).strip("\n").splitlines()
            if lines and lines[0].startswith(SETTINGS_PROMPT):
                blocks.append((path.name, lines[0][len(SETTINGS_PROMPT):].split(), lines[1:]))
    return blocks


def test_the_settings_tables_are_the_scripts_output_on_the_committed_cells():
    blocks = quoted_settings_blocks()
    assert len(blocks) >= 2   # docs/train.md's learning-rate and train-length reruns
    for name, args, quoted in blocks:
        parsed = counts.arguments(["settings", *args])
        expected = counts.settings([str(ROOT / path) for path in parsed.cells_csvs],
                                   parsed.by.split(","), parsed.bin, parsed.seeds,
                                   parsed.places)
        assert quoted == expected, name


def test_the_first_trial_claim_is_what_first_trial_py_finds():
    first_trial = script("first_trial.py")
    rows = first_trial.comparisons([RESULTS / "third-edition" / "records" / family
                                    for family in first_trial.FAMILIES])
    on_cpu = [row for row in rows if row["devices"] == ("cpu", "cpu")]
    elsewhere = [row for row in rows if row["devices"] != ("cpu", "cpu")]
    assert len(on_cpu) >= 27 and all(row["identical"] for row in on_cpu)
    assert len(elsewhere) >= 28 and not any(row["identical"] for row in elsewhere)
    third = " ".join((RESULTS / "third-edition" / "README.md").read_text(encoding="utf-8")
                     .split())
    assert f"in all {len(on_cpu)} searched cells that ran on the CPU in both editions" in third
    assert f"and in none of the {len(elsewhere)} cells whose search ran on a GPU" in third


def test_the_boundary_table_is_what_boundary_py_computes():
    boundary = script("third-edition/boundary.py")
    third = (RESULTS / "third-edition" / "README.md").read_text(encoding="utf-8")
    prompt = "$ python docs/results/third-edition/boundary.py\n"
    quoted = third.split(prompt, 1)[1].split("```", 1)[0].rstrip("\n").splitlines()
    assert quoted == boundary.table(boundary.curves())


def write_metrics(path: Path, losses: list[float], trial: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"trial": trial, "epoch": epoch, "loss": loss,
                                        "val_exact_match": 0.25}) + "\n"
                            for epoch, loss in enumerate(losses, 1)), encoding="utf-8")


def write_part(cell: Path, trial: int, losses: list[float], finished: bool = True) -> None:
    write_metrics(cell / "trials" / str(trial) / "metrics.jsonl", losses, trial)
    if finished:
        (cell / "trials" / str(trial) / "results.json").write_text("{}", encoding="utf-8")


def test_draws_counts_a_cell_whose_first_run_was_cut_apart_from_first_runs(tmp_path):
    """L2 (k = 2) at depth k: s0 finished in its first run; s1 finished after a paused stretch
    of the same run (its rows begin the finished run's); s2 finished in a second run after a
    cut one; s3 was cut and never finished; s4 left nothing."""
    sweep, lease, pause = tmp_path / "records" / "grid", tmp_path / "lease", tmp_path / "pause"
    finished = {0: [0.3, 0.1], 1: [0.4, 0.2, 0.1], 2: [0.3, 0.05]}
    with open(tmp_path / "cells.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["cell_id", "sweep_dir", "language", "depth", "posenc", "seed",
                         "val_exact_match", "epochs_run", "exact_match_351_400"])
        for seed, losses in finished.items():
            writer.writerow([f"c{seed}", sweep, "L2", 2, "nope", seed, 1.0, len(losses),
                             0.995 if seed != 2 else 0.5])
            write_metrics(sweep / "cells" / f"c{seed}" / "metrics.jsonl", losses)
    write_metrics(pause / "grid-L2-d2-s1-metrics.jsonl", [0.4, 0.2])
    write_metrics(lease / "grid-L2-d2-s2-metrics.jsonl", [0.5, 0.45, 0.44])
    write_metrics(lease / "grid-L2-d2-s3-metrics.jsonl", [0.5])
    lines = counts.draws(str(tmp_path / "cells.csv"), [str(lease), str(pause)], "351:400",
                         depths="k:k")
    assert lines[0] == ("L2 d2: 3 finished (2 >= 99% on 351:400); first runs: 2 finished "
                        "(2 >= 99%)")
    assert lines[2].endswith("s1: finished: 100.0% validation after 3 epochs, 351:400 99.5%")
    assert lines[3] == ("  L2 d2 s2: lease stopped after 3 epochs in configuration 1, best "
                        "validation 25.0%; finished: 100.0% validation after 2 epochs, "
                        "351:400 50.0%")
    assert lines[4].endswith("s3: lease stopped after 1 epoch in configuration 1, best validation "
                             "25.0%; not finished")
    assert lines[5].endswith("s4: no epoch recorded")
    assert counts.draws(str(tmp_path / "cells.csv"), [str(lease), str(pause)], "351:400",
                        depths="k:k", summary=True) == [lines[0], lines[-1]]
    assert lines[-1] == ("k: 3 finished (2 >= 99%); first runs: 2 finished (2 >= 99%), "
                         "3 stopped or not run")


def test_a_run_seen_more_than_once_and_an_unfinished_cells_parts_count_as_one_run(tmp_path):
    """L2 d2 s0: a lease's run, a CPU run and the same CPU run started again from scratch
    (the same epochs), then the cell run in parts: finished parts 0 and 1, whose epochs the
    CPU files begin, part 2 unfinished and part 3 finished (not yet the run's, since part 2
    is missing). s1: finished parts only. s2: a finished cell with parts (its metrics.jsonl
    is the run)."""
    sweep = tmp_path / "records" / "grid"
    lease, cpu, again = tmp_path / "lease", tmp_path / "cpu", tmp_path / "cpu-again"
    with open(tmp_path / "cells.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["cell_id", "sweep_dir", "language", "depth", "posenc", "seed",
                         "val_exact_match", "epochs_run", "exact_match_351_400"])
        writer.writerow(["L2-d2-nope-s2-cc", sweep, "L2", 2, "nope", 2, 1.0, 2, 0.995])
    finished = sweep / "cells" / "L2-d2-nope-s2-cc"
    write_metrics(finished / "metrics.jsonl", [0.3, 0.1])
    (finished / "results.json").write_text("{}", encoding="utf-8")
    write_part(finished, 0, [0.3, 0.1])
    write_metrics(lease / "grid-L2-d2-s0-metrics.jsonl", [0.5])
    for folder in (cpu, again):
        write_metrics(folder / "grid-L2-d2-s0-metrics.jsonl", [0.3, 0.2])
    parted = sweep / "cells" / "L2-d2-nope-s0-aa"
    write_part(parted, 0, [0.3, 0.2])
    write_part(parted, 1, [0.1, 0.05])
    write_part(parted, 2, [0.4], finished=False)
    write_part(parted, 3, [0.9])
    write_part(sweep / "cells" / "L2-d2-nope-s1-bb", 0, [0.7])
    lines = counts.draws(str(tmp_path / "cells.csv"), [str(lease), str(cpu), str(again)],
                         "351:400", seeds="0:2", depths="k:k")
    assert lines[1] == ("  L2 d2 s0: lease stopped after 1 epoch in configuration 1, best "
                        "validation 25.0%; cpu + cpu-again + parts stopped after 4 epochs in "
                        "configurations 1-2, best validation 25.0%; not finished")
    assert lines[2] == ("  L2 d2 s1: parts stopped after 1 epoch in configuration 1, best "
                        "validation 25.0%; not finished")
    assert lines[3] == "  L2 d2 s2: finished: 100.0% validation after 2 epochs, 351:400 99.5%"
    assert lines[-1] == ("k: 1 finished (1 >= 99%); first runs: 1 finished (1 >= 99%), "
                         "2 stopped or not run")


DRAWS_PROMPT = "$ python docs/results/counts.py draws "


def test_the_quoted_draws_are_the_scripts_output_on_the_committed_runs():
    third = (RESULTS / "third-edition" / "README.md").read_text(encoding="utf-8")
    blocks = [textwrap.dedent(block).strip("\n").splitlines()
              for block in third.split("```")[1::2]
              if textwrap.dedent(block).strip("\n").startswith(DRAWS_PROMPT)]
    assert blocks
    for command, *quoted in blocks:
        parsed = counts.arguments(["draws", *command[len(DRAWS_PROMPT):].split()])
        expected = counts.draws(str(ROOT / parsed.cells_csv),
                                [str(ROOT / folder) for folder in parsed.runs], parsed.bin,
                                parsed.seeds, parsed.depths, parsed.summary)
        assert quoted == expected


def test_the_paper_runs_table_is_what_paper_runs_py_computes():
    paper_runs = script("third-edition/paper_runs.py")
    every = paper_runs.runs()
    finished = [run for run in every if run["finished"]]
    records = RESULTS / "third-edition" / "records" / "paper-grid" / "cells"
    # (a cell with finished parts of a split search only, and no results.json, is not done)
    assert len(finished) == len([cell for cell in records.iterdir()
                                 if (cell / "results.json").is_file()])
    # a paused run's file is the start of its finished run, not a draw of its own
    assert not any(run["curve"] == other["curve"][:len(run["curve"])]
                   for run in every if not run["finished"] for other in finished
                   if (run["language"], run["depth"], run["seed"])
                   == (other["language"], other["depth"], other["seed"]))
    third = (RESULTS / "third-edition" / "README.md").read_text(encoding="utf-8")
    block = third.split("$ python docs/results/third-edition/paper_runs.py\n", 1)[1]
    quoted = textwrap.dedent(block.split("```", 1)[0]).rstrip("\n").splitlines()
    assert quoted == paper_runs.summary(every)


def test_fit_by_epoch_is_the_kaplan_meier_estimate_with_unfinished_runs_censored():
    """Four runs at k: fit at epochs 1 and 2, cut after 1 and after 3 without fitting. At
    epoch 1, 1 of 4 at risk fits (S = 3/4); at 2, 1 of the 2 still at risk (S = 3/8); at 3,
    none of 1; past the longest run nothing is known."""
    paper_runs = script("third-edition/paper_runs.py")
    runs = [{"language": "L6", "depth": 6, "seed": 0, "finished": True, "curve": [1.0]},
            {"language": "L6", "depth": 6, "seed": 1, "finished": True, "curve": [0.2, 1.0]},
            {"language": "L6", "depth": 6, "seed": 2, "finished": False, "curve": [0.3]},
            {"language": "L6", "depth": 6, "seed": 3, "finished": False,
             "curve": [0.1, 0.2, 0.4]}]
    for depth in (3, 4, 5):   # one run cut at each other depth, so every line has one
        runs.append({"language": "L6", "depth": depth, "seed": 0, "finished": False,
                     "curve": [0.5]})
    at_k = [run for run in runs if run["depth"] == 6]
    assert paper_runs.share_fit(at_k) == [(0.25, 4), (0.625, 2), (0.625, 1)]
    # shown only while MIN_AT_RISK runs reached the epoch: four runs are too few
    assert paper_runs.MIN_AT_RISK == 5
    lines = paper_runs.fit_by_epoch(runs)
    assert lines[-1] == "k: -, -, -, -, -, -, -, - (4 runs: 2 fit, 2 censored)"
    five = at_k + [dict(at_k[2], seed=4)]   # one more cut after an epoch: 1 of 5 fit at 1
    assert paper_runs.fit_by_epoch(five + runs[4:])[-1] == (
        "k: 20.0% (5), -, -, -, -, -, -, - (5 runs: 2 fit, 3 censored)")
