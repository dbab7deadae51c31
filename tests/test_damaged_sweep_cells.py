"""A sweep resuming over damaged records. Every place of a resume state's plain part replaced
by wrong values either resumes or is refused naming the file (``crasp.train.run.STATE_SHAPE``,
``check_state_fits``); a damaged sweep.json is refused before it is rewritten; in a split
sweep a part's damaged state, results or config fails that cell alone, in words (error.txt
holds a message, not a traceback), and the other cells finish. Found by a mutational fuzz of
a stopped split sweep's files (the ``TypeError``, ``IndexError`` and ``IsADirectoryError``
each case below stood for)."""

from __future__ import annotations

import copy
import io
import json
import shutil

import pytest
import torch
from click.testing import CliRunner

from crasp.cli import cli
from crasp.errors import CraspError, in_words
from crasp.train import run as files
from crasp.train.loop import train
from crasp.train.results import RESULTS_FILE
from crasp.train.search_parts import trial_dir
from crasp.train.sweep import ERROR_FILE, SWEEP_FILE

from json_places import replaced_at
from test_search_parts import SEARCHES, search_config, sweep_args

WRONG = [None, "x", -1, [], {}, 10**30, 1.5]


def places(value, path=()):
    """Every key path in ``value`` (the first item of each list stands for the rest)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from places(item, (*path, key))
    elif isinstance(value, list) and value:
        yield (*path, 0)
        yield from places(value[0], (*path, 0))


def read_state(run_dir) -> dict:
    return torch.load(run_dir / files.STATE_FILE, weights_only=True)


def write_state(run_dir, state: dict) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    (run_dir / files.STATE_FILE).write_bytes(buffer.getvalue())


def plain(state: dict) -> dict:
    return {key: value for key, value in state.items() if key not in files.STATE_TENSORS}


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A whole search stopped in its second trial (one trial summarized), and trial 3 of the
    same search run alone, stopped after its first of three epochs."""
    root = tmp_path_factory.mktemp("stopped")
    config = search_config("L4", SEARCHES[1], 2)
    assert train(config, root / "whole", max_epochs_this_session=4) is None
    assert train(config, root / "part", only_trial=3, max_epochs_this_session=1) is None
    state = read_state(root / "whole")
    assert state["trial"] == 1 and len(state["trial_summaries"]) == 1 and state["improvements"]
    return config, root


@pytest.mark.parametrize("run", ["whole", "part"])
def test_every_place_of_a_resume_state_resumes_or_is_refused_naming_the_run(stopped, tmp_path,
                                                                           run):
    """Refused cases are all run; of the accepted ones, the first in each record trains on
    (one epoch), which is enough to show the loop reads such values (training all would take
    minutes)."""
    config, root = stopped
    only_trial = 3 if run == "part" else None
    state = read_state(root / run)
    refused, resumed = 0, set()
    for place in places(plain(state)):
        for wrong in WRONG:
            changed = {**state, **replaced_at(plain(state), place, wrong)}
            checked, problem = files._plain_state(changed)
            if not problem and checked.get("only_trial") != only_trial:
                problem = "another trial's run"   # crasp.train.loop._check_same_trial
            elif not problem:
                try:
                    files.check_state_fits(root, checked, config.trials(), only_trial)
                except CraspError:
                    problem = "misfit"
            if not problem and place[:2] in resumed:
                continue
            target = tmp_path / "run"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(root / run, target)
            write_state(target, changed)
            try:
                train(config, target, only_trial=only_trial, max_epochs_this_session=1)
                assert not problem, (place, wrong)
                resumed.add(place[:2])
            except CraspError as error:
                assert problem and str(target) in str(error), (place, wrong, error)
                refused += 1
    assert refused > 100 and len(resumed) > 5   # fields a reader never indexes may vary


@pytest.mark.parametrize("change, message", [
    ({"trial": 4}, "trial is 4, but the run searches 4 configuration(s)"),
    ({"epoch": 4}, "epoch is 4, but trial 1 trains 3 epochs"),
    ({"best": None}, "epochs have run but no best is recorded"),
    ({"trial_best": None}, "epochs of the trial have run but its best is not recorded"),
    ({"done": True, "trial_summaries": []}, "marked finished but its best trial has no summary"),
    ({"history": [{"epoch": 1}]}, "history[0].trial: missing"),
    ({"elapsed": float("nan")}, "elapsed: expected a finite number, got NaN"),
    ({"step": -2}, "'step' is negative"),
    ({"best": {"key": [torch.tensor(1.0)]}}, "values other than plain numbers"),
])
def test_a_state_that_does_not_fit_the_run_is_refused_in_words(stopped, tmp_path, change,
                                                               message):
    config, root = stopped
    target = tmp_path / "run"
    shutil.copytree(root / "whole", target)
    write_state(target, {**read_state(target), **change})
    with pytest.raises(CraspError, match="start over") as error:
        train(config, target)
    assert message in str(error.value) and str(target / files.STATE_FILE) in str(error.value)


@pytest.mark.parametrize("key", files.STATE_TENSORS)
def test_tensors_that_do_not_fit_the_run_resume_or_are_refused_in_words(stopped, tmp_path, key):
    """The tensors' dicts, first level and one deeper, replaced by wrong values: torch's own
    loaders check little of it (a schedule's ``base_lrs`` of another length failed at the next
    step; a model tensor of None in the dtype check), ``optimization.check_loaded`` the rest."""
    config, root = stopped
    state = read_state(root / "whole")
    refused = 0
    for place in places(state[key]):
        if len(place) > 2:
            continue
        for wrong in (None, "x", [], {}, torch.zeros(2), float("nan")):
            tensors = copy.deepcopy(state[key])
            holder = tensors if len(place) == 1 else tensors[place[0]]
            holder[place[-1]] = wrong
            refused += refused_resuming(config, root, tmp_path / "run", {**state, key: tensors},
                                        (place, wrong))
    assert refused


def refused_resuming(config, root, target, state: dict, case) -> bool:
    """Whether a copy of the stopped whole search, written to ``target`` with ``state``, is
    refused in words naming its state file when resumed for an epoch (False: it resumed)."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(root / "whole", target)
    write_state(target, state)
    try:
        train(config, target, max_epochs_this_session=1)
    except CraspError as error:
        assert "does not fit this run's model" in str(error), (case, error)
        assert str(target / files.STATE_FILE) in str(error)
        return True
    return False


DELETED = object()


@pytest.mark.parametrize("group", ["state", "param_groups"])
def test_an_optimizer_state_damaged_deep_inside_resumes_or_is_refused_in_words(stopped,
                                                                            tmp_path, group):
    """One level below the last test: each moment of the first parameter's AdamW state, and
    each field of the first parameter group, deleted or replaced by a wrong value. The fuzz of
    whole runs found a deleted moment (KeyError) and an int beyond int64 as ``eps``
    (OverflowError) reaching the next step."""
    config, root = stopped
    state = read_state(root / "whole")
    first = next(iter(state["optimizer"][group])) if group == "state" else 0
    fields = sorted(key for key in state["optimizer"][group][first] if key != "params")
    refused = 0
    for field in fields:
        for wrong in (DELETED, None, "x", torch.zeros(2), float("nan"), 10**30, 10**400,
                      -2**63 - 1):
            optimizer = copy.deepcopy(state["optimizer"])
            if wrong is DELETED:
                del optimizer[group][first][field]
            else:
                optimizer[group][first][field] = wrong
            refused += refused_resuming(config, root, tmp_path / "run",
                                        {**state, "optimizer": optimizer}, (field, wrong))
    assert refused >= len(fields) * 6


@pytest.mark.parametrize("where, value, message", [
    ("model", float("nan"), "model: tensor '{name}' has non-finite values"),
    ("model", float("inf"), "model: tensor '{name}' has non-finite values"),
    ("exp_avg", float("nan"), "optimizer moment 'exp_avg' holds non-finite values"),
    ("exp_avg_sq", -1.0, "optimizer moment 'exp_avg_sq' holds negative values"),
    ("exp_avg_sq", float("inf"), "optimizer moment 'exp_avg_sq' holds non-finite values"),
    ("step", -1.0, "optimizer moment 'step' holds negative values"),
    ("step", -2.0**63, "optimizer moment 'step' holds negative values"),
])
def test_a_resume_state_with_unusable_numbers_is_refused_in_words(stopped, tmp_path, where,
                                                                  value, message):
    """A tensor of the right shape holding a value no step can use: before, a NaN trained on
    into every weight it reached, and a negative step overflowed ``beta ** step``."""
    config, root = stopped
    state = copy.deepcopy(read_state(root / "whole"))
    if where == "model":
        name = next(iter(state["model"]))
        state["model"][name].view(-1)[0] = value
    else:
        name = where
        moments = next(iter(state["optimizer"]["state"].values()))
        moments[where].view(-1)[0] = value
    target = tmp_path / "run"
    shutil.copytree(root / "whole", target)
    write_state(target, state)
    with pytest.raises(CraspError) as error:
        train(config, target, max_epochs_this_session=1)
    assert message.format(name=name) in str(error.value)
    assert f"{target / files.STATE_FILE} does not fit this run's model" in str(error.value)


def test_a_part_folder_holding_another_trials_state_is_refused(stopped, tmp_path):
    config, root = stopped
    target = tmp_path / "run"
    shutil.copytree(root / "part", target)
    write_state(target, {**read_state(target), "trial": 2})
    with pytest.raises(CraspError, match="trial is 2, but the folder runs trial 3 alone"):
        train(config, target, only_trial=3)


def test_a_config_that_is_not_a_config_is_refused_naming_its_file(stopped, tmp_path):
    config, root = stopped
    target = tmp_path / "run"
    shutil.copytree(root / "part", target)
    for text in ("1.5", '"x"', "[]", '{"nope": 1}'):
        (target / files.CONFIG_FILE).write_text(text)
        with pytest.raises(CraspError) as error:
            train(config, target, only_trial=3)
        assert str(target / files.CONFIG_FILE) in str(error.value), text


@pytest.fixture(scope="module")
def stopped_sweep(tmp_path_factory):
    """A split L4 sweep of two cells whose first cell is unassembled: part 2 unfinished (no
    results), part 3 stopped after one epoch."""
    out = tmp_path_factory.mktemp("sweep") / "out"
    args = sweep_args(out, "--split-trials", languages="L4")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    cell = sorted(out.glob("cells/*/"))[0]
    for name in (RESULTS_FILE, files.METRICS_FILE):
        (cell / name).unlink()
    (trial_dir(cell, 2) / RESULTS_FILE).unlink()
    shutil.rmtree(trial_dir(cell, 3))
    config = search_config("L4", SEARCHES[1], 0)
    assert train(config, trial_dir(cell, 3), only_trial=3, max_epochs_this_session=1) is None
    return out, cell.name, args


def damage_state(path):
    write_state(path.parent, {**read_state(path.parent), "trial": 9})


def null_epochs(path):
    path.write_text(json.dumps({**json.loads(path.read_text()), "epochs": None}))


@pytest.mark.parametrize("where, damage, says", [
    ("trials/3/state.pt", damage_state, "trial is 9, but the run searches 4"),
    ("trials/3/state.pt", lambda path: path.write_bytes(b"\x80junk"), "not a crasp resume"),
    ("trials/1/results.json", null_epochs, "not a finished part of a search (epochs: missing)"),
    ("trials/3/config.json", lambda path: path.write_text("[]"), "must be a JSON object"),
    ("trials/3/best.safetensors", lambda path: (path.unlink(), path.mkdir()), "Is a directory"),
])
def test_a_damaged_part_fails_its_cell_in_words_and_the_sweep_goes_on(stopped_sweep, tmp_path,
                                                                      where, damage, says):
    base, cell, args = stopped_sweep
    out = tmp_path / "out"
    shutil.copytree(base, out)
    args = [str(out) if word == str(base) else word for word in args]
    damage(out / "cells" / cell / where)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    error = (out / "cells" / cell / ERROR_FILE).read_text()
    assert says in error and "Traceback" not in error, error
    assert f"cell {cell} failed: " in result.output and says in result.output
    assert "1/2 done" in result.output or "done 1" in result.output, result.output
    # the advice in the message works: remove that run's folder, and the sweep finishes
    shutil.rmtree(out / "cells" / cell / where.split("/")[0] / where.split("/")[1])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and not (out / "cells" / cell / ERROR_FILE).exists(), \
        result.output


@pytest.mark.parametrize("place, value", [
    ((), 1), ((), []), (("specs",), 3), (("specs", 0), 1), (("specs", 0, "commands"), "x"),
    (("specs", 0, "commands", 0), 1), (("specs", 0, "cells", 0), {"index": 0}),
    (("specs", 0, "cells", 0, "id"), None)])
def test_a_damaged_sweep_record_is_refused_before_it_is_rewritten(stopped_sweep, tmp_path,
                                                                  place, value):
    base, _, args = stopped_sweep
    out = tmp_path / "out"
    shutil.copytree(base, out)
    args = [str(out) if word == str(base) else word for word in args]
    record = json.loads((out / SWEEP_FILE).read_text())
    record = replaced_at(record, place, value) if place else value
    (out / SWEEP_FILE).write_text(json.dumps(record))
    result = CliRunner().invoke(cli, args)
    # a record that is not an object with crasp's keys is not crasp's: the place is refused
    says = "not a sweep record" if place else "refusing to write the sweep"
    assert result.exit_code == 2 and says in result.output, result.output
    assert str(out) in result.output and "Traceback" not in result.output
    assert json.loads((out / SWEEP_FILE).read_text()) == record


def test_in_words_says_what_the_command_line_says(tmp_path):
    assert in_words(CraspError("bad")) == "error: bad"
    try:
        open(tmp_path, "rb")
    except OSError as error:
        assert in_words(error) == f"error: Is a directory ({tmp_path})"
