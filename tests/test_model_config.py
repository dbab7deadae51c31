"""``ModelConfig`` and the tensor-name schema (``crasp.compiler.model_config``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import crasp
from crasp.compiler import compile_program
from crasp.compiler.model_config import (
    EMBED, OUT_BIAS, OUT_WEIGHT, ModelConfig, ModelFormatError, attention, expected_shapes, ffn,
)
from crasp.compiler.random_models import random_model

EXAMPLES = [p for p in sorted(Path("examples").glob("*.crasp"))
            if p.stem not in ("aa_star", "contains_ab")]  # positional: not compilable
FIXTURES = Path(__file__).parent / "fixtures" / "model_config"


@pytest.mark.parametrize("name", ["majority", "dyck1", "L5_predict"])
def test_config_json_is_byte_identical_to_the_one_written_before_model_config(name, tmp_path):
    """The fixtures were written by crasp at commit 82a30aa, before ModelConfig existed
    (``crasp compile examples/NAME.crasp``, run from the repository root)."""
    compile_program(crasp.load_program(f"examples/{name}.crasp")).save(tmp_path / "m")
    assert (tmp_path / "m" / "config.json").read_bytes() == (
        FIXTURES / f"{name}.config.json").read_bytes()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_compiled_config_round_trips_in_its_key_order(path):
    model = compile_program(crasp.load_program(str(path)))
    spec = ModelConfig.from_json(model.config, str(path))
    assert spec.to_json() == model.config
    assert list(spec.to_json()) == list(model.config)
    assert json.dumps(spec.to_json()) == json.dumps(model.config)


@pytest.mark.parametrize("seed", range(20))
def test_random_models_round_trip_and_name_every_tensor_by_the_schema(seed):
    model = random_model(seed)
    spec = model.spec
    assert list(spec.to_json()) == list(model.config)
    assert set(model.tensors) == set(expected_shapes(spec))


@pytest.mark.parametrize("path", EXAMPLES[:6], ids=lambda p: p.stem)
def test_the_schema_names_every_tensor_in_file_order(path):
    model = compile_program(crasp.load_program(str(path)))
    spec = model.spec
    names = [EMBED]
    for layer, widths in enumerate(spec.ffn_widths):
        names += [attention(layer, part) for part in ("q", "k", "v", "o")]
        for m in range(len(widths) + 1):
            names += [ffn(layer, m, "weight"), ffn(layer, m, "bias")]
    names += [OUT_WEIGHT, OUT_BIAS]
    assert list(expected_shapes(spec)) == names and set(model.tensors) == set(names)
    assert {name: tuple(model.tensors[name].shape) for name in names} == expected_shapes(spec)


@pytest.mark.parametrize("change, message", [
    ({"format": "onnx"}, "not a crasp model"),
    ({"version": 3}, "version 3 is not supported"),
    ({"d_model": 0}, "'d_model' must be an integer >= 1"),
    ({"bos_id": 7}, "'bos_id' must be len(vocab)"),
    ({"ffn_widths": [[]]}, "'ffn_widths' must hold"),
    ({"precision": {"total_bits": 60, "frac_bits": 2}}, "'precision' must be"),
])
def test_bad_configs_are_refused_naming_the_file(change, message):
    config = {**compile_program(crasp.load_program("examples/majority.crasp")).config, **change}
    with pytest.raises(ModelFormatError, match="somewhere/config.json") as refused:
        ModelConfig.from_json(config, "somewhere")
    assert message in str(refused.value)
