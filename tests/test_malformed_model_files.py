"""Every JSON file of every kind of model, with any of its values replaced by one of the wrong
shape, is answered or refused in one message (exit 2), never with a traceback.

Fuzzing the model directories found the class: ``"other_id": 3.0`` passed the compiled
model's check (``3.0 == 3``) and failed in the executor; a trainer config's ``alibi_slopes:
"x"``, ``test_bins: 5`` or ``search: [1]`` failed while being normalized; a float
realization's ``model.json`` with ``ffn_widths: 7`` or ``dtype: {}``, and a trained run's
``results.json`` with ``selected: []`` or ``data: 1``, failed while the model was built.
"""

from __future__ import annotations

import json
import shutil

import pytest

import test_models
from test_models import invoke

models = test_models.models   # the fixture: one model of each kind

WRONG_VALUES = [None, True, False, -1, 10**30, 1.5, float("nan"), "x", [], [1], {}, {"a": 1},
                [[1, 2]]]
"""Values of every JSON type and none of the expected shapes (and an integer's float twin,
added per key below)."""


def _json_files(directory):
    return sorted(path.relative_to(directory) for path in directory.rglob("*.json"))


def _variants(value, index: int):
    """Four wrong values for one key, rotating through ``WRONG_VALUES`` by the key's index so
    that every value meets keys of every file; an integer also gets its float twin."""
    chosen = [WRONG_VALUES[(index * 4 + k) % len(WRONG_VALUES)] for k in range(4)]
    if isinstance(value, int) and not isinstance(value, bool):
        chosen.append(float(value))
    return [v for v in chosen if not (v == value and type(v) is type(value))]


@pytest.mark.parametrize("kind", ["fixed-precision", "float-realization", "trained-run",
                                  "fixed-precision-run"])
def test_every_value_of_every_json_file_replaced_is_answered_or_refused(models, kind, tmp_path):
    source = models[kind]
    files = _json_files(source)
    assert files, kind
    tried = 0
    refused = set()
    for name in files:
        original = json.loads((source / name).read_text())
        for index, key in enumerate(sorted(original)):
            for value in _variants(original[key], index):
                target = tmp_path / f"m{tried}"
                shutil.copytree(source, target)
                (target / name).write_text(json.dumps({**original, key: value}))
                result = invoke("run", "--model", target, "a b a")
                tried += 1
                assert result.exit_code in (0, 2), (name, key, value, result.output)
                assert result.exception is None or isinstance(result.exception, SystemExit), (
                    name, key, value, repr(result.exception))
                assert "Traceback" not in result.output, (name, key, value)
                if result.exit_code == 2:
                    refused.add(str(name))
                shutil.rmtree(target)
    assert tried >= 40, tried
    assert refused == READ_BY_RUN[kind], refused


READ_BY_RUN = {"fixed-precision": {"config.json"},
               "float-realization": {"config.json", "model.json"},
               "trained-run": {"config.json", "results.json"},
               "fixed-precision-run": {"model/config.json"}}
"""The files ``crasp run --model`` reads, per kind: a wrong value in each is refused."""


def test_every_trainer_config_field_with_a_wrong_value_is_accepted_or_refused_in_words():
    """``TrainConfig.from_dict(...).validate()``, which reads every config.json of a run, a
    realization, a sweep's cells and a ``--set``, raises only ``CraspError``: each field,
    each wrong value (and an integer's float twin)."""
    from crasp.errors import CraspError
    from crasp.train.config import TrainConfig
    from crasp.train.presets import resolve_preset

    good = resolve_preset("default", language="L3", depth=1).to_dict()
    outcomes = {"accepted": 0, "refused": 0}
    for index, key in enumerate(sorted(good)):
        for value in _variants(good[key], index) + WRONG_VALUES:
            try:
                TrainConfig.from_dict({**good, key: value}).validate()
                outcomes["accepted"] += 1
            except CraspError:
                outcomes["refused"] += 1
    assert outcomes["refused"] > 10 * len(good), outcomes


SET_VALUES = ['null', 'true', '-1', '1e400', '1.5', '"x"', '[]', '[1]', '{}', '[[1, 2]]',
              '[{"d_model": "x"}]', '[{"nope": 1}]', '3.0']


def test_every_config_field_set_to_a_wrong_value_on_the_command_line_exits_0_or_2():
    """``crasp train --set KEY=VALUE --print-config``, every field, wrong values of every JSON
    type (fuzzing found ``search=[1]`` and ``search=[{"nope": 1}]`` failing inside the preset
    resolution with a TypeError)."""
    from crasp.train.presets import resolve_preset

    fields = sorted(resolve_preset("default", language="L3", depth=1).to_dict())
    refused = 0
    for key in fields:
        for value in SET_VALUES:
            result = invoke("train", "--language", "L3", "--depth", "1", "--set",
                            f"{key}={value}", "--print-config")
            assert result.exit_code in (0, 2), (key, value, result.output)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                key, value, repr(result.exception))
            refused += result.exit_code == 2
    assert refused > 5 * len(fields)
