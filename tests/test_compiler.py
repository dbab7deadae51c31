"""The compiler against the interpreter: every example, hypothesis-generated programs, and the
corners of the construction (BOS, cancelled counts, min/max/if-else, depth 0, limits)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

import crasp
from crasp import syntax
from crasp.compiler import compile_program, execute, verify
from crasp.compiler.linearize import MAX_PIECES
from crasp.errors import ProgramError
from crasp.languages.programs import PROGRAMS_DIR
from strategies import programs

EXAMPLES = sorted(PROGRAMS_DIR.glob("*.crasp"))


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def stated_depth(path: Path) -> int:
    return int(re.search(r"^// depth: (\d+)$", path.read_text(), re.MULTILINE).group(1))


def check(text: str, max_length: int = 8, random_length: int = 300):
    """Compile, check layers == depth, compare with the interpreter; return the model."""
    program = crasp.parse_program(text)
    model = compile_program(program)
    assert model.n_layers == crasp.depth_of(program)
    result = verify(program, max_exhaustive_length=max_length, max_random_length=random_length,
                    n_random=3, model=model)
    assert result.ok, result.describe()
    assert result.saturations == 0
    return model


# ---------------------------------------------------------------- the examples

COMPILABLE = [p for p in EXAMPLES if not syntax.is_positional(crasp.load_program(p))]
POSITIONAL = [p for p in EXAMPLES if syntax.is_positional(crasp.load_program(p))]


@pytest.mark.parametrize("path", COMPILABLE, ids=lambda p: p.stem)
def test_example_has_one_layer_per_level_and_agrees_with_the_interpreter(path):
    """Every string up to length 8 and a few random strings up to length 2000, every position."""
    program = crasp.load_program(path)
    model = compile_program(program)
    assert model.n_layers == stated_depth(path) == crasp.depth_of(program)
    assert model.config["n_heads"] == (1 if model.n_layers else 0)
    result = verify(program, max_exhaustive_length=8, max_random_length=2000, n_random=4,
                    model=model)
    assert result.ok, result.describe()
    assert result.saturations == 0
    assert result.checked_strings == sum(len(program.alphabet) ** n for n in range(9)) + 4


@pytest.mark.parametrize("path", COMPILABLE, ids=lambda p: p.stem)
def test_no_sublayer_is_empty(path):
    model = compile_program(crasp.load_program(path))
    for layer in range(model.n_layers):
        assert np.any(model.tensors[f"layers.{layer}.attn.v"])
        assert np.any(model.tensors[f"layers.{layer}.attn.o"])
        for m in range(len(model.config["ffn_widths"][layer]) + 1):
            assert np.any(model.tensors[f"layers.{layer}.ffn.{m}.weight"])


def test_precision_is_minimal_for_a_value_reached_at_bos():
    """s = 0 always. dyck2_bounded needs p = 3 for its test #( - #) - 3 < 0, whose value at
    BOS is -3; at p = 2 it saturates to -2 and the model goes wrong."""
    program = crasp.load_program("examples/dyck2_bounded.crasp")
    model = compile_program(program)
    assert model.config["precision"] == {"total_bits": 3, "frac_bits": 0}
    assert all(compile_program(crasp.load_program(path)).config["precision"]["frac_bits"] == 0
               for path in COMPILABLE)
    narrow = type(model)({**model.config, "precision": {"total_bits": 2, "frac_bits": 0}},
                         model.tensors)
    result = verify(program, max_exhaustive_length=4, n_random=0, model=narrow)
    assert not result.ok and result.saturations > 0


def _strings(alphabet, max_length):
    for length in range(max_length + 1):
        yield from itertools.product(alphabet, repeat=length)


@pytest.mark.parametrize("path", POSITIONAL, ids=lambda p: p.stem)
def test_positional_programs_without_positions_are_refused_at_the_construct(path):
    program = crasp.load_program(path)
    with pytest.raises(ProgramError) as caught:
        compile_program(program, posenc="nope")
    error = caught.value
    line = program.source.splitlines()[error.span.line - 1]
    construct = re.search(r"'([^']*)'", error.message).group(1)  # pos_even, #[pred] "a"
    assert line[error.span.column - 1:error.span.end_column - 1] == construct
    assert error.render().startswith(f"{path}:{error.span.line}:{error.span.column}: error: "
                                     "--posenc nope cannot realize the ")
    assert "the encodings that can: " in error.render()


# ---------------------------------------------------------------- random programs

@settings(max_examples=100)
@given(programs(alphabet=("a", "b"), max_depth=4, max_definitions=8))
def test_random_programs_compile_to_their_depth_and_agree(text):
    check(text, max_length=6, random_length=300)


# ---------------------------------------------------------------- the construction's corners

def test_bos_never_counts_even_where_the_body_is_true_at_bos():
    """!"a" holds at BOS; the value projection cancels it, so #!"a" is 0 there."""
    model = check('alphabet "a" "b"\nnone = #!"a" < 1\n')
    evaluation = execute(model, [[], ["b"], ["a", "a"], ["a", "b"]])
    assert evaluation.accept.tolist() == [True, False, True, False]


def test_comparisons_with_zero_hold_at_bos_and_decide_the_empty_input():
    check('alphabet "a" "b"\nx = #"a" == 0 && #!"b" <= 0\n')
    check('alphabet "a" "b"\nx = !(#"a" >= 0)\n')


def test_cancelled_counts_keep_their_layers():
    """The counts cancel (the tests are constant) but each level still gets a non-empty layer."""
    model = check('alphabet "a" "b"\nx = #"a" - #"a" < 1\n')
    assert model.n_layers == 1
    model = check('alphabet "a" "b"\ny = #"b" > 0\nx = 0 * #y == 0 && #"a" - #"a" >= 0\n')
    assert model.n_layers == 2 and np.any(model.tensors["layers.1.attn.v"])


@pytest.mark.parametrize("text", [
    'c = min(#"a", 2 * #"b") - 1\nx = c < max(#"b", 3) || c == 2',
    'c = #"a" if #"b" > 1 else 3 - #"a"\nx = 2 * c >= #"b" + max(c, -c)',
    'm = max(min(#"a", #"b"), #"a" - #"b")\nx = m != 1 && -m < 2',
    'p = #"a" > #"b"\nx = (p if #p > 2 else !p) || #(p && "b") == #"a" - 3',
    'x = min(#"a", 1) + min(#"b", 1) + min(#"a", #"b") == 2',
], ids=["min-max", "if-count", "nested", "if-bool", "sum-of-mins"])
def test_arithmetic_min_max_and_conditionals_fold_into_the_feed_forward(text):
    check('alphabet "a" "b"\n' + text + "\n")


def test_depth_zero_programs_have_no_layers():
    model = check('alphabet "a" "b" "c"\nx = "a" || !"b" && true\n')
    assert model.n_layers == 0 and model.config["d_model"] == 5
    assert model.config["ffn_widths"] == [] and model.config["n_heads"] == 0


def test_too_many_linear_pieces_is_an_error_at_the_expression():
    lines = [f'm{i} = min(#"a", {i})' for i in range(1, 14)]
    lines.append("s = " + " + ".join(f"m{i}" for i in range(1, 14)))
    lines.append("x = s > 0")
    with pytest.raises(ProgramError) as caught:
        compile_program(crasp.parse_program("\n".join(lines) + "\n", "pieces.crasp"))
    assert caught.value.span.line == 14
    assert f"limit of {MAX_PIECES}" in caught.value.message


def test_unknown_token_is_read_as_the_interpreter_reads_it():
    program = crasp.load_program("examples/majority.crasp")
    strings = [["a"], ["a", "z"], ["z", "z", "a"], ["z"]]
    got = execute(compile_program(program), strings)
    assert np.array_equal(got.output, crasp.evaluate(program, strings).output)


def test_the_general_attention_path_agrees_with_the_uniform_shortcut():
    program = crasp.load_program("examples/dyck1.crasp")
    model = compile_program(program)
    strings = [list(s) for s in _strings(program.alphabet, 6)] + [list("(()" * 40)]
    shortcut = execute(model, strings)
    general = execute(model, strings, uniform_shortcut=False)
    assert np.array_equal(shortcut.scores, general.scores)
    assert general.saturations == 0


def test_float_mode_reports_where_rounding_matters():
    """Without the floor of the average, d / (i + 1) is fractional and the bit gadget breaks."""
    program = crasp.load_program("examples/majority.crasp")
    model = compile_program(program)
    strings = [list(s) for s in _strings(program.alphabet, 4)]
    plain = execute(model, strings, mode="float")
    exact = execute(model, strings)
    found = plain.disagreement
    assert found is not None and found.layer == 1
    column = found.position + 1
    assert found.exact == bool(exact.scores[found.input, column] > 0) != found.float
    assert "float model answers" in found.describe()
    assert exact.disagreement is None
