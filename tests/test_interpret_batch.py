"""The interpreter's flat batch (``crasp.interpret``): the encoding of every kind of token
against a lookup per token, counts over long batches, integers at the edges of the narrow
types, a foreign token named by its input and position, and the padded views of the values."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp import syntax
from crasp.errors import InputError
from crasp.interpret import BOS_ID, PAD_ID, encode, encode_flat, evaluate_encoded
from reference import evaluate_at
from strategies import program_asts, token_strings

# One character each: ASCII, the two that the encoder tries first for BOS, Latin-1 beyond ASCII,
# beyond Latin-1, beyond the basic plane, a lone surrogate, whitespace.
CHARACTERS = st.sampled_from(["a", "b", "(", "\x00", "\x01", "\x02", "é", "ÿ", "中", "😀",
                              "\ud800", " ", "\n"])
# Tokens of other lengths, some holding the characters that the encoder joins with.
TOKENS = CHARACTERS | st.sampled_from(["", "ab", "a\x00", "\x00\x01", "a\x00b", "\x01a\x00",
                                       "中文"]) | st.text(max_size=3)


def looked_up(alphabet: list[str], inputs: list[list[str]]) -> list[list[int]]:
    """Each input's ids, BOS first, one token at a time: what the encoder must give."""
    return [[BOS_ID] + [alphabet.index(t) if t in alphabet else len(alphabet) for t in tokens]
            for tokens in inputs]


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, unique=True, max_size=5), st.booleans(), st.data())
def test_every_token_is_encoded_as_a_lookup_per_token(alphabet, one_character, data):
    pool = CHARACTERS if one_character else TOKENS   # one character each: the joined string
    candidates = st.sampled_from(alphabet) | pool if alphabet else pool
    inputs = data.draw(st.lists(st.lists(candidates, max_size=6), max_size=5))
    program = syntax.Program((), tuple(alphabet))
    rows = looked_up(alphabet, inputs)
    flat = encode_flat(program, inputs)
    assert flat.ids.tolist() == [i for row in rows for i in row]
    assert flat.lengths.tolist() == [len(tokens) for tokens in inputs]
    width = max(map(len, rows), default=1)
    assert encode(program, inputs).ids.tolist() == [row + [PAD_ID] * (width - len(row))
                                                    for row in rows]


@pytest.mark.parametrize("inputs", [[["", "ab"]], [["a", "b"], ["ab", ""]], [["", "a", "b", "ab"]],
                                    [["a\x00b"], [""]], [[""], ["a\x00b"]], [["a\x01"], ["", "b"]]])
def test_tokens_of_other_lengths_are_not_read_as_characters(inputs):
    # as many characters as tokens, or as many once joined, yet not one character per token
    program = syntax.Program((), ("a", "b", "ab"))
    assert encode_flat(program, inputs).ids.tolist() == \
        [i for row in looked_up(["a", "b", "ab"], inputs) for i in row]


def test_tokens_that_are_not_strings_are_refused():
    program = syntax.Program((), ("a",))
    for inputs in ([["a", 1]], [["a", ["a"]]], [["a"], [None]]):
        with pytest.raises(InputError, match="inputs must be one string"):
            encode_flat(program, inputs)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from("ab"), max_size=5), min_size=1, max_size=4),
       st.sampled_from(["c", "", "cd", "\x00", "中"]), st.data())
def test_a_foreign_token_is_named_by_its_input_and_position(inputs, foreign, data):
    row = data.draw(st.integers(0, len(inputs) - 1))
    position = data.draw(st.integers(0, len(inputs[row])))
    inputs[row].insert(position, foreign)
    message = f"input {row + 7}: token {foreign!r} at position {position} is not in the alphabet"
    with pytest.raises(InputError, match=re.escape(message)):
        encode_flat(syntax.Program((), ("a", "b")), inputs, strict_alphabet=True, first_number=7)


def test_counts_are_exact_over_long_batches_of_long_inputs():
    # One prefix sum runs over the whole batch, less each input's sum before it: past 2^16
    # positions, and past 2^15 in one input (the narrow types' edges).
    program = crasp.load_program(crasp.example("dyck1"))
    rng = np.random.default_rng(0)
    for lengths in ((30_000, 0, 32_767, 5, 20_000), (50_000, 3)):
        inputs = [rng.choice(["(", ")"], size=n, p=[0.8, 0.2]).tolist() for n in lengths]
        together = crasp.evaluate(program, inputs)
        for row, tokens in enumerate(inputs):
            opened = np.cumsum(np.array(tokens, dtype=object) == "(", dtype=np.int64)
            assert together.values_of(row)["C_open"].tolist() == opened.tolist()
            closed = np.arange(1, len(tokens) + 1) - opened
            balanced = len(tokens) == 0 or (closed[-1] == opened[-1]
                                            and (closed <= opened).all())
            assert bool(together.accept[row]) == bool(balanced)


EDGES = st.sampled_from([2 ** 15, 2 ** 31, 2 ** 32, 2 ** 63]).flatmap(
    lambda edge: st.sampled_from([edge - 2, edge - 1, edge, edge + 1, 1 - edge, -edge]))


@st.composite
def edge_integer_programs(draw):
    """A count expression whose literals and factors sit at the edges of int16, int32, int64."""
    count = lambda: syntax.Count(syntax.TokenTest(draw(st.sampled_from("ab"))))  # noqa: E731
    expr: syntax.Expr = count()
    for _ in range(draw(st.integers(1, 4))):
        right = count() if draw(st.booleans()) else syntax.IntConst(draw(EDGES))
        kind = draw(st.sampled_from([syntax.Add, syntax.Sub, syntax.Min, syntax.Max, "scale"]))
        expr = syntax.Scale(draw(EDGES | st.integers(-3, 3)), expr) if kind == "scale" else \
            kind(expr, right)
    answer = syntax.Compare(draw(st.sampled_from(syntax.COMPARISON_OPERATORS)), expr,
                            syntax.IntConst(draw(EDGES)))
    return syntax.Program((syntax.Definition("n", expr, syntax.COUNT),
                           syntax.Definition("x", answer, syntax.BOOL)), ("a", "b"))


@settings(max_examples=150, deadline=None)
@given(edge_integer_programs(), st.lists(token_strings(max_length=6), max_size=4))
def test_integers_at_the_edges_of_the_narrow_types_are_exact(program, inputs):
    columns = crasp.evaluate(program, inputs).columns
    for row, tokens in enumerate(inputs):
        for i in range(-1, len(tokens)):
            expected = evaluate_at(program, tokens, i)
            assert int(columns["n"][row, i + 1]) == expected["n"]
            assert bool(columns["x"][row, i + 1]) == expected["x"]


@settings(max_examples=100, deadline=None)
@given(program_asts(max_depth=3, positional=True), st.lists(token_strings(max_length=7),
                                                             max_size=4))
def test_padded_views_hold_the_values_with_bos_first_and_zeros_past_each_end(program, inputs):
    evaluation = crasp.evaluate(program, inputs)
    from_padded = evaluate_encoded(program, encode(program, inputs))
    width = max(map(len, inputs), default=0) + 1
    answer = program.answer.name
    for name, column in evaluation.columns.items():
        assert column.shape == (len(inputs), width)
        assert column.tolist() == from_padded.columns[name].tolist()
        for row, tokens in enumerate(inputs):
            at_bos = evaluate_at(program, tokens, -1)[name]
            assert column[row, 0] == at_bos
            assert column[row, 1:len(tokens) + 1].tolist() == \
                evaluation.values_of(row)[name].tolist()
            assert not column[row, len(tokens) + 1:].any()
            assert evaluation.trace[name][row].tolist() == column[row, 1:].tolist()
    for row, tokens in enumerate(inputs):
        assert evaluation.output[row].tolist() == \
            [bool(v) for v in evaluation.columns[answer][row, 1:len(tokens) + 1]] + \
            [False] * (width - 1 - len(tokens))
