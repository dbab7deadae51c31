"""TransformerLens and Hugging Face exports (issue 30): parity with ``crasp run --model`` at every
position, on every example and on random programs, for float realizations (exact, within their
certificate) and trained runs (the same decisions as ``crasp eval``); the CLI, the files it
writes, loading them without crasp, and the refusals (exit status 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings

import crasp
from crasp.cli import cli
from crasp.realize import realize_float
from crasp.errors import CraspError
from crasp.interop import to_hugging_face, to_transformer_lens
from crasp.languages.programs import PROGRAMS_DIR
from crasp.realize.checkpoint import save_float_realization
from crasp.train.checkpoint import Checkpoint, load_checkpoint
from crasp.train.config import TrainConfig
from crasp.train.model import build_model
from parity import assert_parity, encode, strings_for
from strategies import programs

EXAMPLES = sorted(path.stem for path in PROGRAMS_DIR.glob("*.crasp"))
POSITIONAL = ("aa_star", "contains_ab")   # the compiler refuses positions (docs/compiler.md)
COMPILABLE = [name for name in EXAMPLES if name not in POSITIONAL]
PER_LENGTH = 64   # strings per length up to 8: all of them up to 64, else drawn
N_CTX = 160


@lru_cache(maxsize=None)
def realization_dir(source: str, dtype: str, root: str) -> str:
    """A float realization of ``source`` (an example name or program text) at the largest
    length its dtype certifies, saved under ``root``."""
    program = (crasp.load_program(crasp.example(source)) if source in EXAMPLES
               else crasp.parse_program(source))
    largest = realize_float(program, 1, dtype).largest_certifiable
    directory = f"{root}/{abs(hash((source, dtype)))}-{dtype}"
    save_float_realization(directory, realize_float(program, largest, dtype), "p", "",
                           force=True)
    return directory


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("interop"))


def program_of(source: str):
    return (crasp.load_program(crasp.example(source)) if source in EXAMPLES
            else crasp.parse_program(source))


def check_export(source: str, fmt: str, root: str) -> None:
    program = program_of(source)
    checkpoint = load_checkpoint(realization_dir(source, "float64" if fmt == "tl" else "float32",
                                                 root))
    certified = checkpoint.config["certified_length"]
    if fmt == "tl":
        model = to_transformer_lens(checkpoint, n_ctx=N_CTX)
        assert {p.dtype for p in model.parameters()} == {torch.float64}
        run = lambda ids: model(torch.as_tensor(ids))[..., 0]  # noqa: E731
    else:
        model, _ = to_hugging_face(checkpoint, n_ctx=N_CTX)
        run = lambda ids: model(input_ids=torch.as_tensor(ids)).logits[..., 0]  # noqa: E731

    def scorer(ids):
        with torch.no_grad():
            return run(ids).numpy()
    vocab = list(program.alphabet)
    strings = strings_for(vocab, up_to=8, random_count=4,
                          random_length=min(N_CTX - 1, certified), per_length=PER_LENGTH)
    assert_parity(program, vocab, scorer, strings)


@pytest.mark.parametrize("name", COMPILABLE)
def test_both_exports_match_every_example(name, root, one_torch_thread):
    check_export(name, "tl", root)
    check_export(name, "hf", root)


@pytest.mark.parametrize("name", POSITIONAL)
def test_positional_examples_are_refused_by_the_compiler(name):
    with pytest.raises(crasp.ProgramError, match="cannot compile"):
        realize_float(crasp.load_program(crasp.example(name)), 1, "float32")


@settings(max_examples=4)
@given(programs(max_depth=3, max_definitions=5))
def test_both_exports_match_random_programs(source):
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        try:
            check_export(source, "tl", scratch)
            check_export(source, "hf", scratch)
        except CraspError as error:
            assert "depth 0" in str(error)   # compiles to no layers: refused by compile too
        finally:
            realization_dir.cache_clear()


def trained(norm: str, posenc: str = "nope", attention: str = "softmax", heads: int = 2,
            activation: str = "relu", seed: int = 0) -> Checkpoint:
    """A randomly initialised checkpoint of the trainer's class, as ``load_checkpoint`` gives a
    trained run (scores of both signs: the decisions are not all alike)."""
    config = TrainConfig(language="dyck1", depth=2, d_model=8, n_heads=heads, d_ff=12, norm=norm,
                         posenc=posenc, attention=attention, activation=activation,
                         dropout=0.0).validate()
    torch.manual_seed(seed)
    module = build_model(config, 2).eval()
    return Checkpoint(module, {"vocab": ["(", ")"], "bos_id": 2, "n_layers": 2,
                               "kind": "trained", "dtype": "float32",
                               "train_config": config.to_dict()})


@pytest.mark.parametrize("norm,posenc,attention,activation", [
    ("pre", "nope", "softmax", "relu"), ("pre", "learned", "softmax", "gelu"),
    ("pre", "sinusoidal", "dp-free", "relu"), ("none", "nope", "softmax", "relu")])
def test_trained_runs_decide_as_crasp_eval(norm, posenc, attention, activation):
    checkpoint = trained(norm, posenc, attention, activation=activation)
    strings = strings_for(["(", ")"], up_to=8, random_count=8, random_length=40)
    batches = [encode(["(", ")"], [s for s in strings if len(s) == 8]),
               encode(["(", ")"], strings[-8:])]
    exports = [to_transformer_lens(checkpoint, n_ctx=64)]
    if norm == "pre":   # Hugging Face: GPT-2 (a normalization-free softmax model is refused)
        exports.append(to_hugging_face(checkpoint, n_ctx=64)[0])
    for ids in batches:
        expected = checkpoint.scores(ids)   # what crasp eval and crasp run --model compute
        for model in exports:
            with torch.no_grad():
                out = model(torch.as_tensor(ids))
            got = (out if isinstance(out, torch.Tensor) else out.logits)[..., 0].double().numpy()
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
            clear = np.abs(expected) > 1e-5   # the same decision wherever the sign is no tie
            assert clear.mean() > 0.9
            assert np.array_equal((got > 0)[clear], (expected > 0)[clear])


def test_several_hidden_layers_become_consecutive_blocks(root):
    checkpoint = load_checkpoint(realization_dir("dyck2_bounded", "float64", root))
    bridge = to_transformer_lens(checkpoint, n_ctx=16)
    plan = bridge.crasp_plan
    per_layer = [len(widths) for widths in checkpoint.module.ffn_widths]
    assert len(plan.blocks) == sum(per_layer)
    assert [(b.layer, b.stage) for b in plan.blocks] == [
        (layer, stage) for layer, count in enumerate(per_layer)
        for stage in range(1, count + 1)]
    assert [b.attention is not None for b in plan.blocks] == [b.stage == 1
                                                              for b in plan.blocks]
    # the scratch banks are zero after every layer's last block
    _, cache = bridge.run_with_cache(bridge.to_tokens("(()())("))
    scratch = [i for i, label in enumerate(plan.labels) if label.startswith("hidden bank")]
    for index, block in enumerate(plan.blocks):
        if block.stage == per_layer[block.layer]:
            assert not cache[f"blocks.{index}.hook_out"][..., scratch].any()


def test_tokenizer_travels_with_the_bridge(root):
    bridge = to_transformer_lens(load_checkpoint(realization_dir("dyck1", "float64", root)),
                                 n_ctx=16)
    assert bridge.to_tokens("(())").tolist() == [[2, 0, 0, 1, 1]]
    assert bridge.to_tokens("( ( ) )").tolist() == [[2, 0, 0, 1, 1]]
    assert bridge.to_tokens(["()", "(())"]).tolist() == [[2, 0, 1, 3, 3], [2, 0, 0, 1, 1]]
    scores = bridge(bridge.to_tokens(["(x)", "(()"]))[..., 0]
    # an unknown token: no answer for its string (0 * NaN is NaN even where masked), and the
    # other strings of the batch are untouched
    assert torch.isnan(scores[0]).all() and not torch.isnan(scores[1]).any()


def test_cli_writes_both_formats_and_they_load_without_crasp(root, tmp_path):
    model = realization_dir("dyck2_bounded", "float64", root)
    model32 = realization_dir("dyck2_bounded", "float32", root)
    runner = CliRunner()
    out_tl, out_hf = tmp_path / "d2.tl", tmp_path / "d2.hf"
    result = runner.invoke(cli, ["export", model, "--format", "transformer-lens", "-o",
                                 str(out_tl), "--n-ctx", "32"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["export", model32, "--format", "hf", "-o", str(out_hf),
                                 "--n-ctx", "32"])
    assert result.exit_code == 0, result.output
    assert json.loads((out_hf / "crasp.json").read_text())["architecture"] == \
        "LlamaForTokenClassification"
    again = runner.invoke(cli, ["export", model32, "--format", "hf", "-o", str(out_hf)])
    assert again.exit_code == 2 and "use --force to replace it" in again.output
    assert runner.invoke(cli, ["export", model32, "--format", "hf", "-o", str(out_hf),
                               "--force"]).exit_code == 0
    # the documented loading recipes (docs/interop.md), with crasp made unimportable
    script = f"""
import sys; sys.modules["crasp"] = None
import json, torch
from safetensors.torch import load_file
from transformers import AutoModelForTokenClassification, AutoTokenizer
from transformer_lens.model_bridge.sources.native import boot
tokenizer = AutoTokenizer.from_pretrained({str(out_tl)!r})
bridge = boot(json.load(open({str(out_tl / 'config.json')!r})), tokenizer=tokenizer,
              dtype=torch.float64)
bridge.load_state_dict(load_file({str(out_tl / 'model.safetensors')!r}))
tl = bridge(bridge.to_tokens(["(())((", "()))"]))[..., 0] > 0
hf = AutoModelForTokenClassification.from_pretrained({str(out_hf)!r})
tok = AutoTokenizer.from_pretrained({str(out_hf)!r})
batch = tok(["(())((", "()))"], return_tensors="pt", padding=True)
with torch.no_grad():
    logits = hf(**batch).logits[..., 0]
print(json.dumps([tl.tolist(), (logits > 0).tolist(), str(hf.dtype)]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    tl, hf, dtype = json.loads(done.stdout.strip().splitlines()[-1])
    program = crasp.load_program(crasp.example("dyck2_bounded"))
    evaluation = crasp.evaluate(program, ["(())((", "()))"])
    for decisions in (tl, hf):
        assert decisions[0][1:] == evaluation.output[0, :6].tolist()
        assert decisions[1][1:5] == evaluation.output[1, :4].tolist()
    assert dtype == "torch.float32"


def test_refusals_exit_2(root, tmp_path):
    runner = CliRunner()
    exact = tmp_path / "d1.model"
    assert runner.invoke(cli, ["compile", "examples/dyck1.crasp", "-o", str(exact)]
                         ).exit_code == 0
    for fmt in ("transformer-lens", "hf"):
        result = runner.invoke(cli, ["export", str(exact), "--format", fmt, "-o",
                                     str(tmp_path / fmt)])
        assert result.exit_code == 2, result.output
        assert "is a fixed-precision model" in result.output
        assert "realize its program in float instead" in result.output
        assert "Traceback" not in result.output
    from crasp.compiler import load_model
    for convert in (to_transformer_lens, to_hugging_face):
        with pytest.raises(CraspError, match="exact compiled model rounds down after every "
                                             "sublayer"):
            convert(load_model(exact))
    result = runner.invoke(cli, ["export", realization_dir("dyck1", "float64", root), "--format",
                                 "hf", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and "float64" in result.output and "transformer-lens" in \
        result.output
    for bad, why in (("post", "post-LN"),):
        with pytest.raises(CraspError, match=why):
            to_transformer_lens(trained(bad))
    with pytest.raises(CraspError, match="RoPE"):
        to_hugging_face(trained("none"))
    assert not (tmp_path / "x").exists()


def test_a_trained_run_gives_crasp_evals_accuracy(tmp_path):
    """A one-epoch run (the default preset: pre-LN, NoPE), read as ``crasp eval`` reads it:
    both exports decide as the run on its language's strings, so they score what eval scores."""
    from crasp.models import load_model
    from crasp.train.loop import train
    from crasp.train.presets import resolve_preset

    train(resolve_preset("default", language="L3", depth=2, d_model=8, n_heads=2, d_ff=16,
                         train_bin=(4, 8), test_bins=[(9, 12)], n_train=32, n_test=8, epochs=1,
                         warmup_steps=1, device="cpu"),
          tmp_path / "run", progress=False, resume=False)
    run = load_model(tmp_path / "run", "eval")
    vocab = list(run.vocab)
    rng = np.random.default_rng(0)
    batches = [strings_for(vocab, up_to=8, random_count=0)[-256:],   # every string of length 8
               [list(rng.choice(vocab, 12)) for _ in range(64)]]     # the test bin's length
    bridge = to_transformer_lens(run)
    hf, _ = to_hugging_face(run)
    for strings in batches:
        expected = run.predict(strings)   # what crasp eval and crasp run --model decide
        ids = torch.as_tensor(encode(vocab, strings))
        with torch.no_grad():
            for scores in (bridge(ids)[..., 0], hf(input_ids=ids).logits[..., 0]):
                decisions = scores.double().numpy() > 0
                assert np.array_equal(decisions[:, 1:], expected.output)
                assert np.array_equal(decisions[:, -1], expected.accept)
