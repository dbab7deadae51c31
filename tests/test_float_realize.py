"""The float realization (crasp compile --target float): exact up to its certified length."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from safetensors.torch import load_file

import crasp
from crasp.cli import cli
from crasp.compiler import compile_program, execute, load_model, verify
from crasp.realize.measure import compile_float, first_disagreement
from crasp.realize.realization import certified, largest_certifiable, realize_float
from crasp.errors import CraspError
from crasp.interpret import evaluate
from crasp.train.checkpoint import load_checkpoint
from crasp.train.config import TrainConfig
from crasp.train.model import CausalTransformer
from strategies import programs

EXAMPLES = [p for p in sorted(Path("examples").glob("*.crasp"))
            if p.stem not in ("aa_star", "contains_ab")]  # positional: no float realization yet
CERTIFIED = 300


def realize(program, directory: Path, max_length: int = CERTIFIED, dtype: str = "float32",
            style: str = "robust"):
    compile_float(program, str(directory), max_length, dtype, measure_beyond=False, style=style)
    return load_model(directory)


@pytest.mark.parametrize("style", ["robust", "minimal"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_agrees_with_the_interpreter_up_to_its_certified_length(path, style,
                                                                              tmp_path):
    program = crasp.load_program(str(path))
    model = realize(program, tmp_path / "float", style=style)
    exhaustive = 8 if len(program.alphabet) <= 3 else 6
    result = verify(program, max_exhaustive_length=exhaustive, max_random_length=CERTIFIED,
                    n_random=8, model=model)
    assert result.ok, result.describe()


@pytest.mark.parametrize("style", ["robust", "minimal"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(alphabet=("a", "b"), max_depth=3, max_definitions=6))
def test_random_programs_agree_with_the_interpreter(style, text):
    program = crasp.parse_program(text)
    if crasp.depth_of(program) == 0:
        return  # no layers: the trainer's class needs one (tested below)
    with tempfile.TemporaryDirectory() as directory:
        model = realize(program, Path(directory) / "float", max_length=200, style=style)
        result = verify(program, max_exhaustive_length=7, max_random_length=200, n_random=4,
                        model=model)
    assert result.ok, f"{text}\n{result.describe()}"


def test_float64_certifies_far_longer_inputs_than_float32():
    assert largest_certifiable("float32", 1) < 10_000 < 1_000_000 < largest_certifiable(
        "float64", 1)
    n = largest_certifiable("float32", 2)
    assert certified(n, "float32", 2) and not certified(n + 1, "float32", 2)


def test_an_uncertifiable_length_is_refused_with_the_largest_certifiable_one():
    program = crasp.load_program("examples/majority.crasp")
    with pytest.raises(CraspError, match="largest certifiable length is 1666"):
        realize_float(program, 10_000, "float32")
    assert realize_float(program, 10_000, "float64").certified_length == 10_000


def test_the_checkpoint_runs_in_the_trainers_model_class_directly(tmp_path):
    """Plain PyTorch: the config and weights of the run directory, no crasp executor."""
    program = crasp.load_program("examples/dyck1.crasp")
    realize(program, tmp_path / "m")
    config = TrainConfig.from_dict(json.loads((tmp_path / "m/config.json").read_text()))
    architecture = json.loads((tmp_path / "m/model.json").read_text())
    vocab = architecture["vocab"]
    module = CausalTransformer(config, len(vocab), 1, architecture["ffn_widths"])
    module.load_state_dict(load_file(str(tmp_path / "m/best.safetensors")))
    assert config.norm == "none" and config.posenc == "nope" and config.n_heads == 1
    strings = [list("(()())"), list("())("), list("((((")]
    ids = torch.tensor([[len(vocab)] + [vocab.index(t) for t in s] for s in strings[:1]])
    decisions = (module(ids)[0, 1:] > 0).tolist()
    assert decisions == evaluate(program, strings[:1]).output[0].tolist()


def test_beyond_the_certified_length_the_gain_stops_separating(tmp_path):
    """Knowing where it fails: d = -1 at position i gives r = 1 - 3 (N + 1) / (i + 1), a bit
    of -r, and the answer 2 bit - 1 turns wrong once i + 1 >= 2 (N + 1)."""
    program = crasp.load_program("examples/majority.crasp")  # #"a" > #"b"
    model = realize(program, tmp_path / "m", max_length=20)
    # majority is the test d = #"b" - #"a" < 0, and d = -1 after every "a" of (ab)*a.
    assert first_disagreement(program, model, [list("ab" * 10 + "a")]) is None
    assert first_disagreement(program, model, [list("ab" * 40 + "a")]) == 2 * (20 + 1) - 1


def test_compile_target_float_cli_prints_certificate_and_measurement(tmp_path):
    out = tmp_path / "m"
    result = CliRunner().invoke(cli, ["compile", "examples/majority.crasp", "--target", "float",
                                       "--max-length", "50", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["certified_length"] == 50 and summary["largest_certifiable"] == 1666
    assert summary["first_failing_length"] is None or summary["first_failing_length"] > 50
    assert summary["gadgets"] == "robust" and summary["hidden_layers"] == [2]
    run = CliRunner().invoke(cli, ["run", "--model", str(out), "a b b"])
    assert run.exit_code == 0, run.output
    minimal = CliRunner().invoke(cli, ["compile", "examples/majority.crasp", "--target", "float",
                                       "--max-length", "50", "--gadgets", "Minimal", "-o",
                                       str(tmp_path / "minimal")])
    assert minimal.exit_code == 0, minimal.output
    assert "minimal gadgets" in minimal.output
    assert "layer 1: 1 hidden layer (1 for the bits of its 1 test)" in minimal.output
    architecture = json.loads((tmp_path / "minimal" / "model.json").read_text())
    assert architecture["gadgets"] == "minimal" and architecture["ffn_widths"] == [[3]]
    missing = CliRunner().invoke(cli, ["compile", "examples/majority.crasp", "--target",
                                        "float", "-o", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "--max-length" in missing.output
    too_long = CliRunner().invoke(cli, ["compile", "examples/majority.crasp", "--target",
                                         "float", "--max-length", "5000", "-o",
                                         str(tmp_path / "y")])
    assert too_long.exit_code == 2 and "largest certifiable length is 1666" in too_long.output
    assert "Traceback" not in too_long.output


def test_corrupted_or_mismatched_checkpoint_gives_a_clear_error(tmp_path):
    program = crasp.load_program("examples/majority.crasp")
    realize(program, tmp_path / "m")
    weights = tmp_path / "m/best.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    result = CliRunner().invoke(cli, ["run", "--model", str(tmp_path / "m"), "a b"])
    assert result.exit_code == 2 and "best.safetensors" in result.output
    assert "Traceback" not in result.output
    realize(program, tmp_path / "n")
    config = json.loads((tmp_path / "n/config.json").read_text())
    config["d_model"] = 10
    (tmp_path / "n/config.json").write_text(json.dumps(config))
    with pytest.raises(CraspError, match="does not fit config.json"):
        load_checkpoint(tmp_path / "n")


def test_a_program_of_depth_zero_is_refused_for_the_float_target(tmp_path):
    program = crasp.parse_program('alphabet "a" "b"\nx = "a"\n')
    with pytest.raises(CraspError, match="depth 0"):
        realize(program, tmp_path / "m")


def test_execute_reports_the_dtype_it_ran_in(tmp_path):
    program = crasp.load_program("examples/majority.crasp")
    model = realize(program, tmp_path / "m", dtype="float64")
    assert execute(model, [list("ab")]).mode == "float64"


@pytest.mark.parametrize("dtype, bits", [(torch.float32, 24), (torch.float64, 53)])
def test_the_one_stage_bit_is_exact_in_floats_wherever_the_certificate_holds(dtype, bits):
    """bit = ReLU(-r) - ReLU(-r - 1), computed as the model does (a linear layer, ReLU, a linear
    layer with other units beside), is exactly [r <= -1] for every float r <= -1 or >= 0 with
    |r| < 2^(p-1), the bound the certificate implies (realization.py's module docstring)."""
    generator = torch.Generator().manual_seed(0)
    limit = 2.0 ** (bits - 1)
    magnitudes = torch.exp(torch.rand(100_000, generator=generator, dtype=torch.float64)
                           * torch.log(torch.tensor(limit - 1))).to(dtype)
    edges = torch.tensor([1.0, 1.0 + 2.0 ** -(bits - 1), 2.0, 3.0, limit / 2, limit - 1],
                         dtype=dtype)
    negative = -(1.0 + torch.cat([magnitudes, edges - 1]))  # r <= -1
    positive = torch.cat([magnitudes - 1, edges - 1, torch.zeros(1, dtype=dtype)])  # r >= 0
    r = torch.cat([negative, positive])
    noise = torch.rand(len(r), 3, generator=generator, dtype=dtype) * 1000  # other residual dims
    residual = torch.cat([r[:, None], noise], dim=1)
    first = torch.nn.Linear(4, 4, dtype=dtype)
    second = torch.nn.Linear(4, 2, dtype=dtype)
    with torch.no_grad():
        first.weight.copy_(torch.tensor([[-1, 0, 0, 0], [-1, 0, 0, 0], [1, 0, 0, 0],
                                         [0, 1, 1, 1]], dtype=dtype))
        first.bias.copy_(torch.tensor([0, -1, 0, 0], dtype=dtype))
        second.weight.copy_(torch.tensor([[1, -1, 0, 0], [1, 0, -1, 0]], dtype=dtype))
        second.bias.zero_()
        out = second(torch.relu(first(residual)))
    bit, clear = out[:, 0], out[:, 1]
    assert torch.equal(bit, (r <= -1).to(dtype))
    assert torch.equal(r + clear, torch.zeros_like(r))


@pytest.mark.parametrize("style, extra", [("robust", 1), ("minimal", 0)])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_each_layer_says_how_many_hidden_layers_it_has_and_why(path, style, extra):
    """minimal: the exact model's hidden layers; robust: one more (the clean bits)."""
    program = crasp.load_program(str(path))
    realization = realize_float(program, 100, style=style)
    exact = compile_program(program).config["ffn_widths"]
    assert len(realization.hidden_layer_reasons) == len(realization.ffn_widths) == len(exact)
    for reason, widths, exact_widths in zip(realization.hidden_layer_reasons,
                                            realization.ffn_widths, exact):
        stated = int(reason.split(": ")[1].split(" hidden")[0])
        assert stated == len(widths) == len(exact_widths) + extra, reason


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("is_and", [True, False])
def test_a_first_level_gate_over_thresholds_is_exact_within_its_margin(dtype, is_and):
    """AND / OR of test literals (either polarity) and exact bits, computed as the realization
    computes it (stage 1: u1 = ReLU(-r), u3 = ReLU(r); stage 2: one unit over the indicators
    2 u1 / 4 u3 / x), is exactly the Boolean answer for r-hat <= -3/2 or >= 1/2 with |r-hat| up to
    the largest bound the gate margin certifies (realization.py's module docstring)."""
    from crasp.realize.realization import _gamma

    name = "float32" if dtype == torch.float32 else "float64"
    generator = torch.Generator().manual_seed(1)
    for n_tests, n_bits in [(1, 0), (1, 1), (2, 0), (2, 2), (4, 1)]:
        n = n_tests + n_bits
        bound = 1.0
        while _gamma(n + 1, name) * (2 * n + 4 * n * bound * 2) <= 0.5:
            bound *= 2  # the largest power of two within the gate margin
        rows = 20_000
        true_test = torch.rand(rows, n_tests, generator=generator) < 0.5
        magnitude = 1.5 + torch.rand(rows, n_tests, generator=generator, dtype=torch.float64) * (
            bound - 1.5)
        magnitude[:100] = bound  # the edge of the certified range
        r = torch.where(true_test, -magnitude, magnitude - 1.0).to(dtype)  # <= -3/2 or >= 1/2
        bits = torch.rand(rows, n_bits, generator=generator) < 0.5
        positive = torch.rand(n_tests, generator=generator) < 0.5
        u1, u3 = torch.relu(-r), torch.relu(r)
        literal_true = torch.where(positive, true_test, ~true_test)
        if is_and:  # AND = ReLU(1 - sum fails): fails(t) = 4 u3, fails(!t) = 2 u1, 1 - x
            tests = torch.where(positive, 4 * u3, 2 * u1)
            bit_weight, bias = 1.0, 1.0 - n_bits
        else:  # OR = 1 - ReLU(1 - sum holds): holds(t) = 2 u1, holds(!t) = 4 u3, x
            tests = torch.where(positive, 2 * u1, 4 * u3)
            bit_weight, bias = -1.0, 1.0
        stage1 = torch.cat([tests, bits.to(dtype)], dim=1)
        weight = torch.cat([-torch.ones(n_tests, dtype=dtype),
                            torch.full((n_bits,), bit_weight, dtype=dtype)])
        unit = torch.relu(stage1 @ weight + torch.tensor(bias, dtype=dtype))
        gate = unit if is_and else 1 - unit
        expected = (literal_true.all(dim=1) & bits.all(dim=1) if is_and
                    else literal_true.any(dim=1) | bits.any(dim=1))
        assert torch.equal(gate, expected.to(dtype)), (n_tests, n_bits)
