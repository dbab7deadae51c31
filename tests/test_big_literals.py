"""Integer literals of any size, in every arithmetic position, in both dialects.

A literal too large for int64 may stand anywhere a count can: as an operand of ``+``, ``-``,
``min``, ``max``, a comparison or a conditional branch, and as the factor of a product, also
where the product is small (``0 * 12345678901234567890``) or chained (``0 * 2 * 10**20``, which
Hahn's grammar reads as ``0 * (2 * 10**20)``). Every such program is read, checked, evaluated
(compared with the plain reference evaluator), formatted and measured without an exception.
"""

from __future__ import annotations

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp import syntax
from crasp.cli import cli
from crasp.fmt import format_program
from reference import evaluate_at

BIG = st.sampled_from([0, 1, 2, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64 + 1,
                       12345678901234567890, 10 ** 40])


@st.composite
def counts(draw, size: int):
    """A count over the tokens a and b with big literals in every arithmetic position."""
    leaves = ["int", "count"]
    kind = draw(st.sampled_from(leaves if size <= 0 else
                                leaves + ["add", "sub", "scale", "scale", "min", "max", "if"]))
    if kind == "int":
        return syntax.IntConst(draw(BIG))
    if kind == "count":
        return syntax.Count(syntax.TokenTest(draw(st.sampled_from("ab"))))
    if kind == "scale":
        return syntax.Scale(draw(BIG), draw(counts(size - 1)))
    if kind == "if":
        condition = syntax.Compare(draw(st.sampled_from(syntax.COMPARISON_OPERATORS)),
                                   draw(counts(size - 1)), draw(counts(size - 1)))
        return syntax.Conditional(condition, draw(counts(size - 1)), draw(counts(size - 1)))
    node = {"add": syntax.Add, "sub": syntax.Sub, "min": syntax.Min, "max": syntax.Max}[kind]
    return node(draw(counts(size - 1)), draw(counts(size - 1)))


@st.composite
def big_literal_programs(draw) -> syntax.Program:
    value = draw(counts(draw(st.integers(0, 4))))
    answer = syntax.Compare(draw(st.sampled_from(syntax.COMPARISON_OPERATORS)),
                            syntax.Ref("c"), draw(counts(2)))
    return syntax.Program((syntax.Definition("c", value, syntax.COUNT),
                           syntax.Definition("x", answer, syntax.BOOL)), ("a", "b"))


INPUTS = [[], ["a"], ["b", "a"], ["a", "a", "b"], ["b", "b", "b", "a"]]


@settings(max_examples=150, deadline=None)
@given(big_literal_programs())
def test_big_literals_evaluate_exactly_in_both_dialects(program):
    text = format_program(program)
    for dialect in ("crasp", "hahn"):
        read = crasp.parse_program(text, dialect=dialect)
        evaluation = crasp.evaluate(read, INPUTS)
        for row, tokens in enumerate(INPUTS):
            for i in range(-1, len(tokens)):
                expected = evaluate_at(program, tokens, i)
                assert evaluation.columns["c"][row, i + 1] == expected["c"], (text, dialect)
                assert evaluation.columns["x"][row, i + 1] == expected["x"], (text, dialect)
        assert crasp.format_source(read)
        assert crasp.analyze(read).depth == crasp.analyze(program).depth


@settings(max_examples=40, deadline=None)
@given(st.lists(BIG, min_size=2, max_size=4), st.sampled_from(["crasp", "hahn"]))
def test_chained_products_of_big_literals_run_from_the_command_line(tmp_path_factory, factors,
                                                                  dialect):
    """``0 * 2 * 12345678901234567890`` and its kin: one answer, no traceback."""
    path = tmp_path_factory.mktemp("big") / "p.crasp"
    product = " * ".join(str(f) for f in factors)
    path.write_text(f'c = {product} * #"a"\nx = c == {product} * #"a"\n')
    result = CliRunner().invoke(cli, ["run", "--dialect", dialect, str(path), "a a"])
    assert result.exit_code == 0, result.output
    assert result.output.endswith("1 a a: True\n")
