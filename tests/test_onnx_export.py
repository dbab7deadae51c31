"""crasp export --format onnx: onnxruntime agrees with crasp's executor at every position."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.compiler import compile_program, execute, load_model
from crasp.compiler.executor import _encode
from crasp.export.onnx import write_onnx
from crasp.train.loop import train
from crasp.train.presets import resolve_preset

torch.set_num_threads(1)
EXAMPLES = ["majority", "dyck1", "anbncn", "L5_predict", "E4_predict", "L4"]


def random_strings(vocab, count, longest, seed=0):
    rng = np.random.default_rng(seed)
    lengths = [longest] + list(rng.integers(0, longest + 1, count - 1))
    return [list(rng.choice(vocab, n)) if n else [] for n in lengths]


def agree(model, path, strings):
    """ONNX decisions == executor decisions at every position (BOS included)."""
    session = onnxruntime.InferenceSession(str(path))
    ids, lengths = _encode(model, strings)
    decision, score = session.run(["decision", "score"], {"ids": ids})
    expected = execute(model, strings)
    assert decision.shape == ids.shape and decision.dtype == np.bool_
    assert np.array_equal(decision, score > 0)
    for row, length in enumerate(lengths):
        assert decision[row, 1:length + 1].tolist() == expected.output[row, :length].tolist()
        assert bool(decision[row, length]) == bool(expected.accept[row])


@pytest.mark.parametrize("name", EXAMPLES)
def test_exact_compiled_models(name, tmp_path):
    model = compile_program(crasp.load_program(f"examples/{name}.crasp"))
    write_onnx(model, tmp_path / "m.onnx")
    agree(model, tmp_path / "m.onnx", random_strings(model.config["vocab"], 16, 3000))
    meta = {p.key: p.value for p in onnx.load(str(tmp_path / "m.onnx")).metadata_props}
    assert json.loads(meta["vocab"]) == model.config["vocab"] and meta["kind"] == "compiled-exact"


@pytest.mark.parametrize("gadgets", ["robust", "minimal"])
@pytest.mark.parametrize("name", ["dyck1", "L5_predict"])
def test_float_realizations(name, gadgets, tmp_path):
    result = CliRunner().invoke(cli, ["compile", f"examples/{name}.crasp", "--target", "float",
                                      "--max-length", "300", "--gadgets", gadgets,
                                      "-o", str(tmp_path / "f")])
    assert result.exit_code == 0, result.output
    exported = CliRunner().invoke(cli, ["export", str(tmp_path / "f"), "--format", "onnx", "-o",
                                        str(tmp_path / "f.onnx")])
    assert exported.exit_code == 0, exported.output
    model = load_model(tmp_path / "f")
    agree(model, tmp_path / "f.onnx", random_strings(model.config["vocab"], 16, 300))


@pytest.mark.parametrize("posenc", ["nope", "rope"])
def test_trained_runs(posenc, tmp_path):
    config = resolve_preset("default", language="L4", depth=1, d_model=16, n_heads=2, d_ff=32,
                            posenc=posenc, train_bin=(8, 16), test_bins=[(17, 30)],
                            n_train=60, n_test=10, epochs=1, warmup_steps=1, device="cpu")
    train(config, tmp_path / "run", progress=False, resume=False)
    model = load_model(tmp_path / "run")
    write_onnx(model, tmp_path / "t.onnx")
    agree(model, tmp_path / "t.onnx", random_strings(model.config["vocab"], 8, 60))


def test_export_never_overwrites_what_it_did_not_write(tmp_path):
    model_dir = tmp_path / "m"
    CliRunner().invoke(cli, ["compile", "examples/majority.crasp", "-o", str(model_dir)])
    other = tmp_path / "notes.onnx"
    other.write_text("mine")
    args = ["export", str(model_dir), "-o", str(other)]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and "refusing to overwrite" in refused.output
    forced = CliRunner().invoke(cli, args + ["--force"])
    assert forced.exit_code == 2 and other.read_text() == "mine"
    ours = tmp_path / "m.onnx"
    assert CliRunner().invoke(cli, ["export", str(model_dir), "-o", str(ours)]).exit_code == 0
    assert CliRunner().invoke(cli, ["export", str(model_dir), "-o", str(ours)]).exit_code == 2
    assert CliRunner().invoke(cli, ["export", str(model_dir), "-o", str(ours),
                                    "--force"]).exit_code == 0
