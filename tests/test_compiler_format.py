"""The model directory format, an independent forward pass written from docs/model-format.md,
the executor's general attention path, corrupted directories, and the command line."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from safetensors.numpy import load_file, save_file

import crasp
from crasp.cli import cli
from crasp.compiler import (CompiledModel, ModelFormatError, compile_program, compile_summary,
                            execute, load_model, verify)
from crasp.errors import CraspError


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def all_strings(alphabet, max_length):
    for length in range(max_length + 1):
        yield from (list(s) for s in itertools.product(alphabet, repeat=length))


# ---------------------------------------------------------------- an independent forward pass

def reference_scores(directory: Path, tokens: list[str]) -> np.ndarray:
    """docs/model-format.md, "Semantics", position by position with Python numbers."""
    config = json.loads((directory / "config.json").read_text())
    t = {k: v.astype(np.float64) for k, v in load_file(directory / "model.safetensors").items()}
    p, s = config["precision"]["total_bits"], config["precision"]["frac_bits"]

    def R(x):
        return np.clip(np.floor(np.asarray(x, dtype=np.float64) * 2 ** s),
                       -2 ** (p - 1), 2 ** (p - 1) - 1) / 2 ** s

    vocab, other = config["vocab"], config.get("other_id")
    ids = [config["bos_id"]] + [vocab.index(token) if token in vocab or other is None
                                else other for token in tokens]
    x = t["embed"][ids]
    for modulus in config.get("periodic_moduli", []):  # version 3: row i mod M at position i
        x = x + np.array([t[f"pos.periodic.{modulus}"][i % modulus] for i in range(len(ids))])
    h = R(x)
    dh = config["d_head"]
    for layer in range(config["n_layers"]):
        heads = []
        for a in range(config["n_heads"]):
            slope = t[f"layers.{layer}.attn.alibi"][a] if config.get("alibi") else 0.0
            rows = slice(a * dh, (a + 1) * dh)
            q, k, v = (h @ t[f"layers.{layer}.attn.{x}"][rows].T for x in "qkv")
            c = np.zeros_like(v)
            for i in range(len(ids)):
                w = [R(math.exp(q[i] @ k[j] - slope * (i - j))) for j in range(i + 1)]
                numerator = sum(R(w[j] * v[j]) for j in range(i + 1))
                denominator = sum(w)
                c[i] = (R(numerator / denominator) if denominator > 0
                        else R(sum(v[: i + 1]) / (i + 1)))
            heads.append(c)
        h = R(h + np.concatenate(heads, axis=1) @ t[f"layers.{layer}.attn.o"].T)
        x = h
        depth = len(config["ffn_widths"][layer]) + 1
        for m in range(depth):
            x = R(x @ t[f"layers.{layer}.ffn.{m}.weight"].T + t[f"layers.{layer}.ffn.{m}.bias"])
            if m < depth - 1:
                x = np.maximum(x, 0)
        h = R(h + x)
    return h @ t["out.weight"] + t["out.bias"]


@pytest.mark.parametrize("name", ["dyck1", "anbncn", "L3"])
def test_an_exported_model_runs_without_crasp(tmp_path, name):
    program = crasp.load_program(f"examples/{name}.crasp")
    compile_program(program).save(tmp_path / "model")
    strings = list(all_strings(program.alphabet, 4)) + [list("aabbaabbab"), ["z", "a", "?"]]
    expected = crasp.evaluate(program, strings)
    for row, tokens in enumerate(strings):
        decisions = reference_scores(tmp_path / "model", tokens) > 0
        assert decisions[-1] == expected.accept[row]
        assert list(decisions[1:]) == list(expected.output[row, :len(tokens)])


def hand_made_model() -> CompiledModel:
    """Two layers with real query/key weights, fractional bits and a BOS query whose every
    weight rounds to 0 (the R(mean v) fallback)."""
    config = {
        "format": "crasp-transformer", "version": 1, "vocab": ["a", "b"], "bos_id": 2,
        "d_model": 3, "n_layers": 2, "n_heads": 1, "d_head": 2, "ffn_widths": [[2], [3, 2]],
        "precision": {"total_bits": 8, "frac_bits": 2}, "depth": 2,
        "residual_labels": ["x", "y", "z"], "program_sha256": "0" * 64,
    }
    rng = np.random.default_rng(7)
    tensors = {"embed": np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]])}
    for layer, widths in enumerate(config["ffn_widths"]):
        tensors[f"layers.{layer}.attn.q"] = np.array([[1.0, 0.5, -4], [0.25, -1, 2]])
        tensors[f"layers.{layer}.attn.k"] = np.array([[0.5, -1, 5], [1, 0.75, -0.5]])
        tensors[f"layers.{layer}.attn.v"] = rng.integers(-8, 9, (2, 3)) / 4
        tensors[f"layers.{layer}.attn.o"] = rng.integers(-4, 5, (3, 2)) / 2
        sizes = [3, *widths, 3]
        for m in range(len(sizes) - 1):
            shape = (sizes[m + 1], sizes[m])
            tensors[f"layers.{layer}.ffn.{m}.weight"] = rng.integers(-4, 5, shape) / 2
            tensors[f"layers.{layer}.ffn.{m}.bias"] = rng.integers(-4, 5, sizes[m + 1]) / 4
    tensors["out.weight"], tensors["out.bias"] = np.array([1.0, -0.5, 0.25]), np.array(0.125)
    return CompiledModel(config, tensors)


def test_the_general_attention_path_matches_the_documented_semantics(tmp_path):
    model = hand_made_model()
    model.save(tmp_path / "hand")
    strings = list(all_strings(["a", "b"], 5))
    got = execute(load_model(tmp_path / "hand"), strings)
    for row, tokens in enumerate(strings):
        assert np.array_equal(got.scores[row, :len(tokens) + 1],
                              reference_scores(tmp_path / "hand", tokens))


# ---------------------------------------------------------------- saving and loading

def test_save_and_load_round_trip(tmp_path):
    model = compile_program(crasp.load_program("examples/dyck1.crasp"))
    model.save(tmp_path / "m")
    model.save(tmp_path / "m", force=True)  # replacing a model directory takes force
    loaded = load_model(tmp_path / "m")
    assert loaded.config == model.config
    assert set(loaded.tensors) == set(model.tensors)
    assert all(np.array_equal(loaded.tensors[k], model.tensors[k]) for k in model.tensors)
    assert load_file(tmp_path / "m" / "model.safetensors")["embed"].dtype == np.float32
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_save_refuses_to_replace_something_else(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    model = compile_program(crasp.load_program("examples/majority.crasp"))
    with pytest.raises(CraspError, match="refusing to write the compiled model"):
        model.save(tmp_path / "notes")
    assert (tmp_path / "notes" / "todo.txt").read_text() == "keep me"


def _corrupt_config(change):
    def apply(directory: Path):
        config = json.loads((directory / "config.json").read_text())
        change(config)
        (directory / "config.json").write_text(json.dumps(config))
    return apply


def _corrupt_tensors(change):
    def apply(directory: Path):
        tensors = load_file(directory / "model.safetensors")
        change(tensors)
        save_file(tensors, directory / "model.safetensors")
    return apply


def _truncate(name):
    def apply(directory: Path):
        data = (directory / name).read_bytes()
        (directory / name).write_bytes(data[: len(data) // 2])
    return apply


CORRUPTIONS = {
    "no-config": (lambda d: (d / "config.json").unlink(), r"config\.json is missing"),
    "no-weights": (lambda d: (d / "model.safetensors").unlink(), r"model\.safetensors is missing"),
    "truncated-config": (_truncate("config.json"), r"config\.json is not valid JSON"),
    "truncated-weights": (_truncate("model.safetensors"), r"model\.safetensors is truncated"),
    "version": (_corrupt_config(lambda c: c.update(version=4)),
                r"format version 4 is not supported"),
    "format": (_corrupt_config(lambda c: c.update(format="gpt2")), r"'format' is 'gpt2'"),
    "missing-key": (_corrupt_config(lambda c: c.pop("d_model")), r"missing key 'd_model'"),
    "bad-bos": (_corrupt_config(lambda c: c.update(bos_id=0)), r"'bos_id' must be len\(vocab\)"),
    "bad-other": (_corrupt_config(lambda c: c.update(other_id=2)),
                  r"'other_id' must be len\(vocab\) \+ 1 = 3"),
    "shape": (_corrupt_tensors(lambda t: t.update(embed=t["embed"][:, :-1].copy())),
              r"tensor 'embed' has shape \[4, 8\], but config\.json implies \[4, 9\]"),
    "missing-tensor": (_corrupt_tensors(lambda t: t.pop("layers.1.attn.v")),
                       r"missing tensor\(s\) layers\.1\.attn\.v"),
    "extra-tensor": (_corrupt_tensors(lambda t: t.update(extra=np.zeros(1, np.float32))),
                     r"unexpected tensor\(s\) extra"),
    "dtype": (_corrupt_tensors(lambda t: t.update(embed=t["embed"].astype(np.int32))),
              r"tensor 'embed' has dtype int32"),
    "nan": (_corrupt_tensors(lambda t: t["out.weight"].__setitem__(0, np.nan)),
            r"tensor 'out\.weight' has non-finite values"),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_corrupted_model_directories_give_clear_errors(tmp_path, name):
    compile_program(crasp.load_program("examples/dyck1.crasp")).save(tmp_path / "m")
    corrupt, message = CORRUPTIONS[name]
    corrupt(tmp_path / "m")
    with pytest.raises(ModelFormatError, match=message):
        load_model(tmp_path / "m")


def test_a_missing_directory_is_an_error(tmp_path):
    with pytest.raises(ModelFormatError, match="does not exist"):
        load_model(tmp_path / "nowhere")


# ---------------------------------------------------------------- verification

def test_verify_reports_the_first_counterexample():
    program = crasp.load_program("examples/majority.crasp")
    model = compile_program(program)
    broken = CompiledModel(model.config, {**model.tensors, "out.bias": np.array(1.0)})
    result = verify(program, max_exhaustive_length=3, n_random=0, model=broken)
    assert not result.ok
    assert (result.counterexample, result.position, result.expected, result.got) == (
        [], -1, False, True)
    assert "on the input '' (0 tokens) at BOS" in result.describe()


# ---------------------------------------------------------------- the command line

@pytest.fixture
def runner():
    return CliRunner()


def test_compile_prints_a_summary_and_writes_the_model(runner, tmp_path):
    out = tmp_path / "dyck1.model"
    result = runner.invoke(cli, ["compile", "examples/dyck1.crasp", "-o", str(out)])
    assert result.exit_code == 0, result.output
    for text in ("layers      2", "d_model     9", "p = 2 total bits, s = 0 fractional bits",
                 "ffn widths", "parameters", "C_open, C_close, V, B"):
        assert text in result.output
    assert load_model(out).config["depth"] == 2


def test_compile_json_has_the_contract_keys(runner, tmp_path):
    result = runner.invoke(cli, ["compile", "examples/anbn.crasp", "-o", str(tmp_path / "m"),
                                 "--json"])
    summary = json.loads(result.output)
    assert {"depth", "layers", "heads", "d_model", "params", "precision", "ffn_widths",
            "layer_table"} <= set(summary)
    assert summary["precision"] == {"total_bits": 2, "frac_bits": 0}
    assert summary == {**compile_summary(load_model(tmp_path / "m")), "output": str(tmp_path / "m")}
    assert [row["layer"] for row in summary["layer_table"]] == [1, 2]


@pytest.mark.parametrize("example, posenc, construct, able", [
    ("aa_star", "nope", "periodic predicate 'pos_even'", "sinusoidal, alibi"),
    ("contains_ab", "nope", "local relation '#[pred] \"a\"'", "alibi"),
    ("contains_ab", "sinusoidal", "local relation '#[pred] \"a\"'", "alibi"),
])
def test_compile_refuses_an_encoding_that_cannot_realize_a_construct(runner, tmp_path, example,
                                                                     posenc, construct, able):
    result = runner.invoke(cli, ["compile", f"examples/{example}.crasp", "--posenc", posenc,
                                 "-o", str(tmp_path / "m")])
    assert result.exit_code == 2, result.output
    assert f"examples/{example}.crasp:" in result.output
    assert f"--posenc {posenc} cannot realize the {construct}" in result.output
    assert f"the encodings that can: {able}" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "m").exists()


@pytest.mark.parametrize("flags", [[], ["--json"]])
def test_run_model_prints_what_the_interpreter_prints(runner, tmp_path, flags):
    runner.invoke(cli, ["compile", "examples/dyck1.crasp", "-o", str(tmp_path / "m")])
    lines = "()\n(()\n)(\n(())()\n"
    compiled = runner.invoke(cli, ["run", "--model", str(tmp_path / "m"), *flags], input=lines)
    interpreted = runner.invoke(cli, ["run", "examples/dyck1.crasp", *flags], input=lines)
    assert compiled.exit_code == 0 and compiled.output == interpreted.output


def test_run_model_reports_a_broken_directory(runner, tmp_path):
    result = runner.invoke(cli, ["run", "--model", str(tmp_path / "missing"), "a"])
    assert result.exit_code == 2 and "does not exist" in result.output


@pytest.mark.parametrize("command", ["depth-check", "decompile"])
def test_verify_counts_its_strings_on_stderr_only_with_progress(tmp_path, command):
    """--verify over many long random strings takes minutes (10,000 of up to 2,000 tokens:
    3 minutes): --progress counts them, the exhaustive ones (31 up to length 4) included."""
    if command == "depth-check":
        arguments = ["depth-check", "examples/majority.crasp"]
    else:
        compile_program(crasp.load_program("examples/majority.crasp")).save(tmp_path / "m")
        arguments = ["decompile", str(tmp_path / "m"), "-o", str(tmp_path / "m.crasp")]
    arguments += ["--verify", "--max-length", "4", "--random-count", "5", "--random-length",
                  "30"]
    quiet = CliRunner().invoke(cli, arguments)
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output
    shown = CliRunner().invoke(cli, [*arguments, "--force", "--progress"]
                               if command == "decompile" else [*arguments, "--progress"])
    assert shown.exit_code == 0, shown.output
    assert "verified: 100%" in shown.stderr and "36/36" in shown.stderr


def test_decompile_shows_its_work_of_the_budget_only_with_progress(tmp_path):
    """A trained model's states can take minutes to enumerate: --progress shows the work
    spent (the summary's "work"), of --max-states, and no time left (the work ends where the
    states end, not at the limit)."""
    compile_program(crasp.load_program("examples/dyck1.crasp")).save(tmp_path / "m")
    arguments = ["decompile", str(tmp_path / "m"), "--json", "--max-states", "9000"]
    quiet = CliRunner().invoke(cli, [*arguments, "-o", str(tmp_path / "a.crasp")])
    shown = CliRunner().invoke(cli, [*arguments, "-o", str(tmp_path / "b.crasp"), "--progress"])
    assert quiet.exit_code == shown.exit_code == 0, quiet.output + shown.output
    assert "decompile" not in quiet.stderr
    work = json.loads(shown.stdout)["work"]
    last = shown.stderr.replace("\r", "\n").splitlines()
    bars = [line for line in last if line.startswith("decompile:")]
    assert bars and f"| {work}/9000 units of --max-states [" in bars[-1]
    assert "<" not in bars[-1]    # tqdm's "elapsed<remaining"
    refused = CliRunner().invoke(cli, [*arguments[:-1], "60", "-o", str(tmp_path / "c.crasp"),
                                       "--progress"])
    assert refused.exit_code == 2 and "too many states" in refused.stderr
    spent = [line for line in refused.stderr.replace("\r", "\n").splitlines()
             if line.startswith("decompile:")][-1]
    assert int(spent.split("| ")[1].split("/")[0]) <= 60


def test_depth_check_verify_exits_1_on_a_disagreement(runner, monkeypatch):
    from crasp.compiler import verification

    def broken(program):
        model = compile_program(program)
        return CompiledModel(model.config, {**model.tensors, "out.bias": np.array(1.0)})

    ok = runner.invoke(cli, ["depth-check", "examples/majority.crasp", "--verify",
                             "--random-count", "2", "--random-length", "50"])
    assert ok.exit_code == 0 and "verified: " in ok.output
    monkeypatch.setattr(verification, "compile_program", broken)
    bad = runner.invoke(cli, ["depth-check", "examples/majority.crasp", "--verify"])
    assert bad.exit_code == 1 and "MISMATCH: on the input ''" in bad.output
