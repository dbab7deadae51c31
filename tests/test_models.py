"""crasp.models: one type per kind of model, one loader, and the kinds every command takes.

The walk runs every command that takes a model (``ACCEPTS`` and every export format) on every
kind of model (built here: a compiled program, its float realization, a one-epoch training run,
an unfinished run, a --precision run with and without its format model, an ONNX export) and on
paths that hold none; each answers normally or exits 2 with one line.
"""

from __future__ import annotations

import shutil

import pytest
import torch
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.export import FORMATS
from crasp.models import (ACCEPTS, KINDS, FixedPrecisionModel, FixedPrecisionRun,
                          FloatRealizationModel, TrainedRun, WrongKindError, check_kind,
                          load_model, recognize)
from crasp.models.kinds import (FIXED_PRECISION, FIXED_PRECISION_RUN, FLOAT_REALIZATION,
                                ONNX_GRAPH, PRECISION_RUN_WITHOUT_MODEL, TRAINED_RUN,
                                UNFINISHED_RUN)
from crasp.train.loop import train
from crasp.train.presets import resolve_preset
from crasp.train.run import FORMAT_MODEL_DIR

torch.set_num_threads(1)

TINY = ["--train-bin", "4:8", "--test-bins", "9:12", "--n-train", "32", "--n-test", "8",
        "--epochs", "1", "--d-model", "8", "--n-heads", "1", "--d-ff", "16",
        "--warmup-steps", "1"]
"""A one-epoch L3 run at depth 1 (the depth of L3's prediction program)."""


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, object]:
    """One model of every kind, over L3's vocabulary: kind name -> its path."""
    place = tmp_path_factory.mktemp("models")
    paths = {FIXED_PRECISION.name: place / "l3.model", FLOAT_REALIZATION.name: place / "l3.float",
             TRAINED_RUN.name: place / "l3.run", ONNX_GRAPH.name: place / "l3.onnx",
             FIXED_PRECISION_RUN.name: place / "l3.fp-run",
             UNFINISHED_RUN.name: place / "l3.stopped",
             PRECISION_RUN_WITHOUT_MODEL.name: place / "l3.fp-run-without-model"}
    program = crasp.example("L3_predict")
    assert invoke("compile", program, "-o", paths["fixed-precision"]).exit_code == 0
    assert invoke("compile", program, "--target", "float", "--max-length", "24", "-o",
                  paths["float-realization"]).exit_code == 0
    for kind, precision in (("trained-run", None), ("fixed-precision-run", "4.1")):
        # two residual dimensions: few enough states for crasp extract and decompile
        train(resolve_preset("default", language="L3", depth=1, d_model=2, n_heads=1, d_ff=8,
                             train_bin=(4, 8), test_bins=[(9, 12)], n_train=32, n_test=8,
                             epochs=1, warmup_steps=1, device="cpu", precision=precision),
              paths[kind], progress=False, resume=False)
    # stopped after the first of two epochs
    assert train(resolve_preset("default", language="L3", depth=1, d_model=2, n_heads=1, d_ff=8,
                                train_bin=(4, 8), test_bins=[(9, 12)], n_train=32, n_test=8,
                                epochs=2, warmup_steps=1, device="cpu"),
                 paths["unfinished-run"], resume=False, max_epochs_this_session=1) is None
    assert invoke("export", paths["fixed-precision"], "-o", paths["onnx"]).exit_code == 0
    shutil.copytree(paths["fixed-precision-run"], paths["precision-run-without-model"])
    shutil.rmtree(paths["precision-run-without-model"] / FORMAT_MODEL_DIR)
    return paths


# command -> (its arguments for MODEL and an output place, what its normal output shows)
COMMAND_LINES = {
    "run --model": (lambda model, out: ["run", "--model", model, "a b a"], "1 a b a: "),
    "eval": (lambda model, out: ["eval", model, "--language", "L3", "--bins", "9:12", "--n", "4"],
             "exact match"),
    "export --format onnx": (lambda model, out: ["export", model, "--format", "onnx", "-o",
                                                 out / "model.onnx"], "wrote "),
    "export --format transformer-lens": (
        lambda model, out: ["export", model, "--format", "transformer-lens", "--n-ctx", "16",
                            "-o", out / "model.tl"], "wrote "),
    "export --format hf": (lambda model, out: ["export", model, "--format", "hf", "--n-ctx", "16",
                                               "-o", out / "model.hf"], "wrote "),
    "decompile": (lambda model, out: ["decompile", model, "-o", out / "program.crasp"], "wrote "),
    "extract": (lambda model, out: ["extract", model, "-o", out / "program.crasp"], "fidelity"),
    "analyze": (lambda model, out: ["analyze", model, "-o", out / "analysis"], "effective depth"),
    "train --init-from": (lambda model, out: ["train", "--language", "L3", "--depth", "1",
                                              "--init-from", model, *TINY, "-o", out / "run"],
                          "exact match"),
}


def test_the_walk_covers_every_command_that_takes_a_model():
    assert set(COMMAND_LINES) == set(ACCEPTS) | {f"export --format {name}" for name in FORMATS}


def _accepted(command: str):
    if command.startswith("export --format "):
        return FORMATS[command.removeprefix("export --format ")].accepts
    return ACCEPTS[command]


@pytest.mark.parametrize("kind", [kind.name for kind in KINDS])
@pytest.mark.parametrize("command", sorted(COMMAND_LINES))
def test_every_command_on_every_kind_answers_or_says_what_it_got(models, command, kind,
                                                                  tmp_path):
    arguments, shown = COMMAND_LINES[command]
    path = models[kind]
    result = invoke(*arguments(path, tmp_path))
    assert "Traceback" not in result.output
    if kind in {accepted.name for accepted in _accepted(command)}:
        assert result.exit_code == 0, result.output
        assert shown in result.output
        return
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1, result.output
    what = next(k for k in KINDS if k.name == kind).what
    assert lines[0].startswith(f"error: {path} is {what}; crasp {command} takes ")
    assert all(accepted.what in lines[0] for accepted in _accepted(command))


@pytest.mark.parametrize("command", sorted(COMMAND_LINES))
@pytest.mark.parametrize("holds", ["nothing", "an empty directory", "a text file",
                                   "a config without weights"])
def test_a_path_that_holds_no_model_exits_2_without_a_traceback(command, holds, tmp_path):
    path = tmp_path / "given"
    if holds == "an empty directory":
        path.mkdir()
    elif holds == "a text file":
        path.write_text("not a model\n")
    elif holds == "a config without weights":
        path.mkdir()
        (path / "config.json").write_text('{"depth": 1}\n')
    out = tmp_path / "out"
    out.mkdir()
    result = invoke(*COMMAND_LINES[command][0](path, out))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.startswith("error: ")


def test_each_kind_is_recognized_from_its_files_and_loaded_as_its_type(models):
    assert {kind: recognize(path).name for kind, path in models.items()} == {
        kind: kind for kind in models}
    types = {"fixed-precision": FixedPrecisionModel, "float-realization": FloatRealizationModel,
             "trained-run": TrainedRun, "fixed-precision-run": FixedPrecisionRun}
    strings = ["", "a", "a b b a", "b a a b a b"]
    for kind, model_type in types.items():
        model = load_model(models[kind])
        assert type(model) is model_type and model.kind.name == kind
        assert model.vocab == ("a", "b") and model.n_layers == 1
        assert model.describe().startswith(f"{models[kind]}: {model.kind.what}")
        evaluation = model.predict(strings)
        expected = crasp.compiler.execute(model.executable, strings)
        assert evaluation.accept.tolist() == expected.accept.tolist()
        if kind not in ("trained-run", "fixed-precision-run"):  # compiled: as the program
            program = crasp.load_program(crasp.example("L3_predict"))
            assert (evaluation.output == crasp.evaluate(program, strings).output).all()


def test_the_kinds_are_told_apart_by_the_file_names_their_writers_use():
    from crasp.compiler.model_format import WEIGHTS_FILE
    from crasp.models import kinds
    from crasp.train.checkpoint import ARCHITECTURE_FILE
    from crasp.train.results import RESULTS_FILE
    from crasp.train.run import BEST_FILE, CONFIG_FILE, FORMAT_MODEL_DIR

    assert kinds.FORMAT_MODEL_DIR == FORMAT_MODEL_DIR
    assert kinds.FIXED_PRECISION_WEIGHTS == WEIGHTS_FILE
    assert kinds.CHECKPOINT_WEIGHTS == BEST_FILE
    assert kinds.REALIZATION_ARCHITECTURE == ARCHITECTURE_FILE
    assert kinds.RUN_RESULTS == RESULTS_FILE
    assert kinds.RUN_CONFIG == CONFIG_FILE


def test_an_onnx_graph_is_recognized_but_read_by_no_command(models):
    with pytest.raises(WrongKindError, match="is an ONNX graph .*crasp.models.load_model takes"):
        load_model(models["onnx"])


def test_check_kind_names_the_kind_or_refuses_it(models, tmp_path):
    assert check_kind(models["trained-run"], "analyze") is TRAINED_RUN
    assert check_kind(tmp_path / "nothing", "analyze") is TRAINED_RUN  # its reader says more
    with pytest.raises(WrongKindError) as refused:
        check_kind(models["float-realization"], "decompile")
    assert str(refused.value) == (
        f"{models['float-realization']} is a float realization (written by crasp compile "
        f"--target float); crasp decompile takes a fixed-precision model (written by crasp "
        f"compile) or a fixed-precision run (written by crasp train --precision); compile the "
        f"program it realizes instead: crasp compile PROG -o DIR")
    with pytest.raises(WrongKindError) as refused:   # a float run: extract it instead
        check_kind(models["trained-run"], "decompile")
    assert str(refused.value).startswith(f"{models['trained-run']} is a trained run (written by "
                                         f"crasp train); crasp decompile takes ")
    assert "extract a program from it instead: crasp extract RUN -o PROG.crasp" in str(
        refused.value)


def test_the_api_names_of_docs_api_md_stay_where_they_were(models):
    """``crasp.compiler.load_model`` still reads checkpoints too, and ``decompile_model`` is the
    decompiler's."""
    from crasp import compiler, decompile
    from crasp.compiler import decompile_model, execute, load_model as compiler_load_model
    from crasp.train.checkpoint import Checkpoint
    from crasp.train.loop import train as loop_train

    assert decompile_model is decompile.decompile_model and callable(loop_train)
    assert isinstance(compiler_load_model(models["fixed-precision"]), compiler.CompiledModel)
    checkpoint = compiler_load_model(models["trained-run"])
    assert isinstance(checkpoint, Checkpoint)
    assert execute(checkpoint, ["a b"]).accept.shape == (1,)


NON_FINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}
WEIGHT_FILES = {FIXED_PRECISION.name: "model.safetensors", FLOAT_REALIZATION.name:
                "best.safetensors", TRAINED_RUN.name: "best.safetensors"}


def _poisoned(source, target, value: float, seed: int):
    """A copy of the model at ``source`` with one weight (a tensor and an element drawn by
    ``seed``) replaced by ``value``."""
    import shutil

    import numpy as np
    from safetensors.numpy import load_file, save_file

    shutil.copytree(source, target)
    weights_file = target / WEIGHT_FILES[recognize(source).name]
    tensors = load_file(str(weights_file))
    rng = np.random.default_rng(seed)
    name = sorted(tensors)[rng.integers(len(tensors))]
    flat = tensors[name].reshape(-1).copy()
    flat[rng.integers(len(flat))] = value
    tensors[name] = flat.reshape(tensors[name].shape)
    save_file(tensors, str(weights_file))
    return target, name


@pytest.mark.parametrize("value", sorted(NON_FINITE))
@pytest.mark.parametrize("kind", sorted(WEIGHT_FILES))
def test_every_kind_with_a_non_finite_weight_is_refused_by_every_command(models, kind, value,
                                                                        tmp_path):
    """Each command that takes the kind (running, evaluating, exporting to ONNX, decompiling,
    analyzing, training from it) exits 2 with one line naming the tensor, and writes nothing."""
    seed = sorted(WEIGHT_FILES).index(kind) * 3 + sorted(NON_FINITE).index(value)
    path, tensor = _poisoned(models[kind], tmp_path / "poisoned", NON_FINITE[value], seed)
    commands = [command for command in sorted(COMMAND_LINES)
                if kind in {accepted.name for accepted in _accepted(command)}]
    assert "run --model" in commands and "export --format onnx" in commands
    for command in commands:
        out = tmp_path / command.replace(" ", "_")
        out.mkdir()
        result = invoke(*COMMAND_LINES[command][0](path, out))
        assert result.exit_code == 2, (command, result.output)
        assert result.output.count("\n") == 1 and "Traceback" not in result.output, command
        assert f"tensor {tensor!r} has non-finite values" in result.output, command
        assert list(out.iterdir()) == [], command
    with pytest.raises(crasp.errors.CraspError, match="non-finite"):
        load_model(path)
