"""``ModelConfig`` and the tensor-name schema (``crasp.compiler.model_config``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import crasp
from crasp.compiler import compile_program
from crasp.realize.realization import realize_float
from crasp.compiler.model_config import (
    NOPE_KEYS,
    EMBED, KEYS, OUT_BIAS, OUT_WEIGHT, ModelConfig, ModelFormatError, attention, expected_shapes,
    ffn,
)
from crasp.compiler.model_format import load_model
from crasp.compiler.random_models import random_model
from json_places import replaced_at

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


def _schema_names(ffn_widths) -> list[str]:
    """The tensor names docs/model-format.md lists, in its order, built from the schema's
    functions one by one (``expected_shapes`` must agree with them)."""
    names = [EMBED]
    for layer, widths in enumerate(ffn_widths):
        names += [attention(layer, part) for part in ("q", "k", "v", "o")]
        for m in range(len(widths) + 1):
            names += [ffn(layer, m, "weight"), ffn(layer, m, "bias")]
    return names + [OUT_WEIGHT, OUT_BIAS]


@pytest.mark.parametrize("path", EXAMPLES[:6], ids=lambda p: p.stem)
def test_the_schema_names_every_tensor_in_file_order(path):
    model = compile_program(crasp.load_program(str(path)))
    spec = model.spec
    names = _schema_names(spec.ffn_widths)
    assert list(expected_shapes(spec)) == names and set(model.tensors) == set(names)
    assert {name: tuple(model.tensors[name].shape) for name in names} == expected_shapes(spec)


@pytest.mark.parametrize("style", ["robust", "minimal"])
def test_a_float_realization_names_its_tensors_by_the_schema(style):
    """The float target emits through the same schema (its checkpoint maps these names)."""
    realization = realize_float(crasp.load_program("examples/dyck1.crasp"), 50, style=style)
    assert list(realization.tensors) == _schema_names(realization.ffn_widths)


LAYER_PREFIX = re.compile(r"""f?["']layers\.""")
FORMAT_ONLY_NAMES = re.compile(r"""\[["']embed["']\]|["']out\.(weight|bias)["']|\.ffn\.\{""")
TRAINER_PARAMETERS = {"crasp/realize/checkpoint.py", "crasp/train/analysis/hessian.py",
                      "crasp/train/analysis/driver.py"}
"""Modules that spell ``layers.{l}`` as the trainer's own parameter names (``CausalTransformer``'s
state dict, ``layers.{l}.attn.q.weight``), which are not the model format's."""


def test_only_model_config_spells_the_model_formats_tensor_names():
    """Every other module names a compiled model's tensors through ``model_config``."""
    package = Path(crasp.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert len(modules) > 50  # the package's sources, wherever it is installed
    spelled = []
    for path in modules:
        name = path.relative_to(package.parent).as_posix()
        if name == "crasp/compiler/model_config.py":
            continue
        patterns = [FORMAT_ONLY_NAMES] + ([] if name in TRAINER_PARAMETERS else [LAYER_PREFIX])
        text = path.read_text()
        spelled += [f"{name}: {m.group()}" for p in patterns for m in p.finditer(text)]
    assert spelled == []


@pytest.mark.parametrize("change, message", [
    ({"format": "onnx"}, "not a crasp model"),
    ({"n_layers": None}, "'n_layers' must be an integer >= 0, got None"),
    ({"vocab": ["a", "a"]}, "'vocab' must be a list of distinct non-empty token strings"),
    ({"other_id": 2}, "'other_id' must be len(vocab) + 1 = 3 (the row after BOS), got 2"),
    ({"residual_labels": ["x"]}, "'residual_labels' must be a list of d_model = 6 strings"),
    ({"n_heads": 0}, "a model with layers needs 'n_heads' >= 1"),
    ({"version": 4}, "version 4 is not supported"),
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


@pytest.mark.parametrize("key", ["d_head", "vocab", "program_sha256"])
def test_a_missing_key_is_named(key):
    config = compile_program(crasp.load_program("examples/majority.crasp")).config
    del config[key]
    with pytest.raises(ModelFormatError, match=f"somewhere/config.json: missing key '{key}'"):
        ModelConfig.from_json(config, "somewhere")


def test_a_config_that_is_not_an_object_is_refused():
    with pytest.raises(ModelFormatError, match="somewhere/config.json: is not a JSON object"):
        ModelConfig.from_json([1, 2], "somewhere")


def test_a_version_1_config_round_trips_without_other_id():
    config = compile_program(crasp.load_program("examples/majority.crasp")).config
    config = {**{k: v for k, v in config.items() if k != "other_id"}, "version": 1}
    spec = ModelConfig.from_json(config, "v1")
    assert spec.other_id is None and spec.embedding_rows == 3
    assert json.dumps(spec.to_json()) == json.dumps(config)


def test_unknown_keys_are_kept_in_place():
    config = compile_program(crasp.load_program("examples/majority.crasp")).config
    config = {"from_a_newer_crasp": [1], **config, "and_another": {"x": None}}
    spec = ModelConfig.from_json(config, "newer")
    assert spec.extra == {"from_a_newer_crasp": [1], "and_another": {"x": None}}
    assert json.dumps(spec.to_json()) == json.dumps(config)


def test_the_compiler_writes_every_key_as_a_typed_field():
    spec = compile_program(crasp.load_program("examples/majority.crasp")).spec
    assert tuple(spec.to_json()) == NOPE_KEYS and spec.extra == {}
    positional = compile_program(crasp.load_program("examples/contains_ab.crasp")).spec
    assert tuple(positional.to_json()) == KEYS and positional.extra == {}
    assert (spec.program_file, spec.answer) == ("examples/majority.crasp", "majority")
    assert spec.d_model_bound == 7 and spec.precision_set_by.startswith("the embedding's bits")
    assert [row["layer"] for row in spec.layer_table] == [1]


def test_a_model_from_elsewhere_has_no_informational_keys():
    spec = random_model(0).spec
    assert (spec.program_file, spec.answer, spec.d_model_bound, spec.layer_table) == (None,) * 4
    assert not {"program_file", "answer", "d_model_bound", "layer_table"} & set(spec.to_json())


def test_a_saved_model_loads_to_the_same_config(tmp_path):
    model = compile_program(crasp.load_program("examples/dyck1.crasp"))
    model.save(tmp_path / "m")
    assert load_model(tmp_path / "m").spec == model.spec


def _integer_places(value, path=()):
    """The path of every integer in a JSON value (booleans are not integers)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _integer_places(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _integer_places(item, path + (index,))
    elif isinstance(value, int) and not isinstance(value, bool):
        yield path


CHECKED_INTEGER_KEYS = {"version", "bos_id", "other_id", "d_model", "n_layers", "n_heads",
                        "d_head", "depth", "ffn_widths", "precision", "periodic_moduli"}


@pytest.mark.parametrize("name", ["majority", "dyck1", "contains_ab"])
def test_every_checked_integer_is_refused_as_a_float_or_a_boolean(name):
    """A reader that compared with ``==`` took ``3.0`` (and ``true`` for 1) as the integer and
    then failed deep inside the executor (fuzzing found ``"other_id": 3.0``). Every integer
    the reader checks, in a NoPE and a positional model, is refused as its float twin, and as
    a boolean where one equals it."""
    config = compile_program(crasp.load_program(f"examples/{name}.crasp")).config
    places = [path for path in _integer_places(config) if path[0] in CHECKED_INTEGER_KEYS]
    assert {path[0] for path in places} >= CHECKED_INTEGER_KEYS - {"periodic_moduli"}
    assert name != "contains_ab" or ("periodic_moduli", 0) in places
    for path in places:
        for twin in [float(_value_at(config, path))] + (
                [bool(_value_at(config, path))] if _value_at(config, path) in (0, 1) else []):
            with pytest.raises(ModelFormatError, match="somewhere/config.json"):
                ModelConfig.from_json(replaced_at(config, path, twin), "somewhere")


def _value_at(config, path):
    for step in path:
        config = config[step]
    return config
