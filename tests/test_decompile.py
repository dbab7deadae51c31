"""``crasp decompile``: transformer -> C-RASP program of the same depth.

Round trips (compile -> decompile) on every example and on hypothesis-generated programs, the
decompiled program against the original at every position of every short string; random
small fixed-precision models that no program produced, against the executor on all strings up
to length 8 and random strings up to length 2,000; the simplifications; the command line.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings

import crasp
from crasp import syntax
from crasp.cli import cli
from crasp.compiler import compile_program, execute, load_model, verify
from crasp.decompile.decompiling import decompile_model
from crasp.decompile.enumerate_states import StateLimitError
from crasp.compiler.model_config import VERSION
from crasp.compiler.model_format import FORMAT, CompiledModel, validate
from crasp.compiler.random_models import random_model
from crasp.hahn import precedence_warnings
from strategies import programs

pytestmark = pytest.mark.usefixtures("one_torch_thread")

COMPILABLE = [path for path in sorted(Path("examples").glob("*.crasp"))
              if not any(isinstance(node, syntax.PositionTest)
                         or (isinstance(node, syntax.Count) and node.relation is not None)
                         for d in crasp.load_program(path).definitions
                         for node in syntax.walk(d.expr))]


def all_strings(alphabet, max_length):
    return [list(word) for n in range(max_length + 1)
            for word in itertools.product(alphabet, repeat=n)]


def assert_same_answers(original: crasp.Program, decompiled: crasp.Program, max_length: int):
    inputs = all_strings(original.alphabet, max_length)
    expected, got = crasp.evaluate(original, inputs), crasp.evaluate(decompiled, inputs)
    assert np.array_equal(expected.output, got.output)
    assert np.array_equal(expected.accept, got.accept)  # the empty input: the answer at BOS


def parses_back(result) -> None:
    """The written text reads back as the program that was checked."""
    assert (crasp.format_program(crasp.parse_program(result.text))
            == crasp.format_program(result.program))
    assert not precedence_warnings(result.program)  # Hahn's parser reads it the same way


def round_trip(original: crasp.Program, max_length: int) -> int:
    """The decompiled program's depth, after checking it against the original and the model."""
    model = compile_program(original)
    result = decompile_model(model)
    parses_back(result)
    assert_same_answers(original, result.program, max_length)
    checked = verify(result.program, 0, 500, 3, model=model)
    assert checked.ok, checked.describe()
    assert model.n_layers == crasp.depth_of(original)
    return crasp.depth_of(result.program)


@pytest.mark.parametrize("path", COMPILABLE, ids=lambda p: p.stem)
def test_every_example_round_trips_with_its_depth(path):
    assert round_trip(crasp.load_program(path), max_length=6) == crasp.depth_of(
        crasp.load_program(path))


@settings(max_examples=25)
@given(programs(alphabet=("a", "b"), max_depth=4, max_definitions=6))
def test_random_programs_round_trip_within_their_depth(text):
    """At most the depth: a program like ``-1 < #"a"`` is constant, and its decompilation
    says so (``answer = true``)."""
    assert round_trip(crasp.parse_program(text), max_length=5) <= crasp.depth_of(
        crasp.parse_program(text))


def test_a_constant_comparison_decompiles_to_a_constant():
    assert round_trip(crasp.parse_program('alphabet "a" "b"\nv = -1 < #"a"\n'), 6) == 0


# ---------------------------------------------------------------- models no program made

RANDOM_SEEDS = [2, 3, 8, 11, 12, 19, 21, 22, 23, 26, 29, 31, 36]


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_models_agree_with_the_executor(seed, tmp_path):
    """Written by the format's own writer and read back: all strings up to length 8 and
    random strings up to length 2,000, every position."""
    random_model(seed).save(tmp_path / "model")
    model = load_model(tmp_path / "model")
    result = decompile_model(model)
    parses_back(result)
    assert crasp.depth_of(result.program) <= model.n_layers
    checked = verify(result.program, 8, 2000, 4, seed=seed, model=model)
    assert checked.ok, checked.describe()


def test_random_models_cover_softmax_attention_and_every_depth():
    """The seeds above are not all uniform heads or constant answers."""
    models = [random_model(seed) for seed in RANDOM_SEEDS]
    assert any(m.tensors[f"layers.{l}.attn.q"].any() and m.tensors[f"layers.{l}.attn.k"].any()
               for m in models for l in range(m.n_layers))
    assert {m.config["precision"]["frac_bits"] for m in models} == {0, 1}
    depths = {(m.n_layers, crasp.depth_of(decompile_model(m).program)) for m in models}
    assert {(1, 1), (2, 2), (3, 3)} <= depths


def assert_agree_outside_the_alphabet(model, program: crasp.Program, max_length: int):
    """Every string over the vocabulary and one token outside it ("z"): the model reads it
    through its "other token" row, the interpreter as a position where no token test holds."""
    inputs = all_strings(tuple(model.config["vocab"]) + ("z",), max_length)
    got, expected = execute(model, inputs), crasp.evaluate(program, inputs)
    assert np.array_equal(got.output, expected.output)
    assert np.array_equal(got.accept, expected.accept)


@pytest.mark.parametrize("seed", [2, 12, 31])
def test_random_models_agree_on_tokens_outside_the_vocabulary(seed):
    model = random_model(seed)
    assert_agree_outside_the_alphabet(model, decompile_model(model).program, 6)


def test_compiled_models_agree_on_tokens_outside_the_vocabulary():
    for name in ("dyck1", "L3", "majority"):
        model = compile_program(crasp.load_program(f"examples/{name}.crasp"))
        assert_agree_outside_the_alphabet(model, decompile_model(model).program, 6)


def test_bos_told_from_an_outside_token_by_a_count():
    """A model without layers that accepts only the empty input: at BOS and at an outside
    token every token test is false, so only a count (#true == 0) tells them apart."""
    config = {"format": FORMAT, "version": VERSION, "vocab": ["a", "b"], "bos_id": 2,
              "other_id": 3, "d_model": 1, "n_layers": 0, "n_heads": 0, "d_head": 0,
              "ffn_widths": [], "precision": {"total_bits": 3, "frac_bits": 0}, "depth": 0,
              "residual_labels": ["is_bos"], "program_sha256": ""}
    model = CompiledModel(config, {"embed": np.array([[0.0], [0], [1], [0]]),
                                   "out.weight": np.array([1.0]), "out.bias": np.array(-0.5)})
    validate(model.config, model.tensors, "hand-made")
    raw = decompile_model(model, readable=False).program   # the writer's own output
    assert crasp.format_program(raw).endswith('bos = #true == 0\nanswer = bos\n')
    program = decompile_model(model).program   # the readability pass inlines bos
    assert crasp.format_program(program).endswith('\nanswer = #true == 0\n')
    assert_agree_outside_the_alphabet(model, program, 4)


def linear_terms(expr: syntax.Expr, sign: int = 1) -> list[int]:
    """The integer coefficients of the counts and constants of one side of a comparison."""
    if isinstance(expr, syntax.Add):
        return linear_terms(expr.left, sign) + linear_terms(expr.right, sign)
    if isinstance(expr, syntax.Scale):
        return [sign * expr.factor]
    if isinstance(expr, syntax.Count):
        return [sign]
    assert isinstance(expr, syntax.IntConst)
    return []


@pytest.mark.parametrize("seed", [2, 8, 26, 29])
def test_comparisons_have_the_smallest_integer_coefficients(seed):
    program = decompile_model(random_model(seed)).program
    compares = [node for d in program.definitions for node in syntax.walk(d.expr)
                if isinstance(node, syntax.Compare)]
    assert compares
    for compare in compares:
        terms = linear_terms(compare.left) + linear_terms(compare.right, -1)
        assert math.gcd(*terms) == 1, crasp.fmt.format_expr(compare)


def test_definitions_are_named_from_residual_labels_and_used():
    model = compile_program(crasp.load_program("examples/dyck1.crasp"))
    program = decompile_model(model, readable=False).program
    names = [d.name for d in program.definitions]
    assert "L1_V" in names  # the class "V's coordinate is 1" (label "V: value (layer 1)")
    assert not crasp.analyze(program).unused
    model.config["residual_labels"] = [""] * model.config["d_model"]
    assert any(name.startswith("L1_state") for name in
               (d.name for d in decompile_model(model, readable=False).program.definitions))


def test_equal_states_are_merged_into_one_definition_each():
    result = decompile_model(compile_program(crasp.load_program("examples/majority.crasp")),
                             readable=False)
    after_layer_1 = result.summary["states"][1]
    assert after_layer_1["classes"] == 2 < after_layer_1["states"]  # accept or not
    assert result.summary["definitions"] == 2  # one comparison and the answer


def test_the_state_limit_is_measured_before_enumerating():
    """L3: layer 1's tables (3 states, a, b and a token outside the vocabulary: 12 pairs, 1
    unit) and 12 candidates; layer 2's tables (5 states: 30 pairs, 1 unit), then 20
    candidates, 34 units in all."""
    model = compile_program(crasp.load_program("examples/L3.crasp"))
    with pytest.raises(StateLimitError) as error:
        decompile_model(model, max_states=33)
    message = str(error.value)
    assert ("layer 2 would enumerate 20 (query state, head output) pairs from its 5 query "
            "states, 20 units of work, 34 in all > --max-states 33") in message
    assert "layer 1: candidate states: 12\n  layer 2: attention tables: 1" in message
    assert error.value.spent == 14 and error.value.limit == 33


def test_the_attention_tables_are_measured_too():
    """50 tokens and the outside token, 51 embedding states: 51 x 52 (query, key) pairs,
    67 units of 40 pairs > 60, refused before any table is built."""
    tokens = [f"t{i}" for i in range(50)]
    text = "alphabet " + " ".join(f'"{t}"' for t in tokens) + '\nanswer = #"t0" > #"t1"\n'
    model = compile_program(crasp.parse_program(text))
    with pytest.raises(StateLimitError, match=r"layer 1 would hold 2,652 \(query state, key "
                                              r"state\) pairs over its 51 states, 67 units"):
        decompile_model(model, max_states=60)
    assert crasp.depth_of(decompile_model(model, max_states=400).program) == 1


# ---------------------------------------------------------------- the command line

@pytest.fixture
def dyck_model(tmp_path):
    compile_program(crasp.load_program("examples/dyck1.crasp")).save(tmp_path / "dyck1.model")
    return str(tmp_path / "dyck1.model")


def test_cli_writes_a_program_that_depth_check_reads_at_the_model_depth(dyck_model, tmp_path):
    output = tmp_path / "dyck1.crasp"
    result = CliRunner().invoke(cli, ["decompile", dyck_model, "-o", str(output), "--verify",
                                      "--max-length", "6", "--random-count", "4"])
    assert result.exit_code == 0, result.output
    assert "verified: the decompiled program agrees with the model (2 layers)" in result.output
    assert "depth        2" in result.output and "states       embedding: 3" in result.output
    report = CliRunner().invoke(cli, ["depth-check", str(output), "--json"])
    assert json.loads(report.output)["depth"] == 2
    assert_same_answers(crasp.load_program("examples/dyck1.crasp"),
                        crasp.load_program(output), 8)


def test_cli_json_summary_and_standard_output(dyck_model):
    result = CliRunner().invoke(cli, ["decompile", dyck_model, "-o", "-", "--json"])
    assert result.exit_code == 0, result.output
    text, _, summary = result.output.partition("answer = ")
    program = crasp.parse_program(text + "answer = " + summary.split("\n", 1)[0] + "\n")
    assert crasp.depth_of(program) == 2
    fields = json.loads(summary.split("\n", 1)[1])
    assert fields["layers"] == fields["depth"] == 2
    assert fields["depths"]["answer"] == 2 and fields["comparisons"] >= 1


def test_cli_refuses_to_replace_what_it_did_not_write(dyck_model, tmp_path):
    runner, output = CliRunner(), tmp_path / "mine.crasp"
    output.write_text('answer = "a"\n')
    result = runner.invoke(cli, ["decompile", dyck_model, "-o", str(output), "--force"])
    assert result.exit_code == 2 and "is not a program written by crasp decompile" in result.output
    assert output.read_text() == 'answer = "a"\n'
    output.unlink()
    assert runner.invoke(cli, ["decompile", dyck_model, "-o", str(output)]).exit_code == 0
    again = runner.invoke(cli, ["decompile", dyck_model, "-o", str(output)])
    assert again.exit_code == 2 and "--force" in again.output
    assert runner.invoke(cli, ["decompile", dyck_model, "-o", str(output), "--force"]
                         ).exit_code == 0
    wrong = runner.invoke(cli, ["decompile", dyck_model, "-o", str(tmp_path / "x.txt")])
    assert wrong.exit_code == 2 and ".crasp or .cr" in wrong.output


def test_cli_state_limit_exits_2_with_the_counts(tmp_path):
    compile_program(crasp.load_program("examples/L3.crasp")).save(tmp_path / "L3.model")
    output = tmp_path / "L3.crasp"
    result = CliRunner().invoke(cli, ["decompile", str(tmp_path / "L3.model"), "-o",
                                      str(output), "--max-states", "12"])
    assert result.exit_code == 2
    assert "error: the model has too many states" in result.output
    assert "layer 1 would enumerate 12 (query state, head output) pairs" in result.output
    assert "Traceback" not in result.output
    assert not output.exists()


def test_cli_refuses_a_model_that_violates_the_format(dyck_model, tmp_path):
    config_path = Path(dyck_model) / "config.json"
    config = json.loads(config_path.read_text())
    config["d_model"] += 1
    config["residual_labels"].append("extra")
    config_path.write_text(json.dumps(config))
    output = tmp_path / "out.crasp"
    result = CliRunner().invoke(cli, ["decompile", dyck_model, "-o", str(output)])
    assert result.exit_code == 2
    assert "model.safetensors: tensor 'embed' has shape" in result.output
    assert "Traceback" not in result.output and not output.exists()
    missing = CliRunner().invoke(cli, ["decompile", str(tmp_path / "none"), "-o", str(output)])
    assert missing.exit_code == 2 and "does not exist" in missing.output
