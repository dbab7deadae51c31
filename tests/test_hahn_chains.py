"""Hahn's reading of long operator chains: linear work, the same trees as the exhaustive search.

The work is counted in loop steps of ``crasp.hahn_parse`` (no clock): for every chain shape
below, from 1 to 30 repetitions, each repetition adds the same number of steps.
"""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp import hahn_parse, syntax
from crasp.cli import cli

SHAPES = {
    "and-or pairs": ("p && q", " || "),
    "or-and pairs": ("(p || q)", " && "),
    "and-or triples": ("p && q || r", " && "),
    "mixed sums": ('#"a" - x + y', " + "),
    "sum comparisons": ('x + #"a" < y - 1', " || "),
    "negations": ("!p && q", " || "),
    "conditionals": ("x if p && q || r else y", " + "),
    "counts": ('#p && q', " || "),
}


def reading_steps(text: str) -> int:
    source = text + "\n"
    tokens = hahn_parse.tokenize(source, "<chain>")[0]
    parser = hahn_parse._StatementParser(tokens, source, "<chain>")
    try:
        parser.expression(0)
    except Exception:   # ill-typed or unreadable shapes still cost what they cost
        pass
    return parser.steps


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_every_chain_up_to_30_repetitions_takes_linear_work(shape):
    unit, joiner = SHAPES[shape]
    steps = [reading_steps(joiner.join([unit] * k)) for k in range(1, 31)]
    increments = {b - a for a, b in zip(steps[2:], steps[3:])}
    assert len(increments) == 1, (shape, steps)


class _Exhaustive(hahn_parse._StatementParser):
    """Every path of every operator loop, none pruned: the search as it was defined."""

    def _loop(self, step, precedence, start, end, tree, visited):
        results = []
        stack = [(end, tree, iter(step(precedence, start, end, tree)))]
        while stack:
            at, node, continuations = stack[-1]
            following = next(continuations, None)
            if following is None:
                stack.pop()
                results.append((at, node))
            else:
                stack.append((*following, iter(step(precedence, start, *following))))
        return results


ATOMS = ["p", "q", "x", "1", '"a"', '#"a"', "#p", "!p", "(p || q)", "(x - 1)", "true"]
OPERATORS = ["&&", "||", "+", "-", "<", "==", "if", "else", "2 *"]


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 9))
def test_pruned_search_reads_every_statement_as_the_exhaustive_one(rng: random.Random, length):
    words = [rng.choice(ATOMS)]
    for _ in range(length):
        operator = rng.choice(OPERATORS)
        words += [operator, rng.choice(ATOMS)] if operator != "2 *" else ["+ 2 *",
                                                                           rng.choice(ATOMS)]
    source = " ".join(words) + "\n"
    tokens = hahn_parse.tokenize(source, "<t>")[0]
    outcomes = []
    for parser_type in (hahn_parse._StatementParser, _Exhaustive):
        try:
            outcomes.append(parser_type(tokens, source, "<t>").expression(0))
        except hahn_parse.ProgramError as error:
            outcomes.append(error.message)
    pruned, exhaustive = outcomes
    assert (syntax.same_structure(pruned, exhaustive) if not isinstance(pruned, str)
            else pruned == exhaustive), source


@pytest.mark.parametrize("command", [["run"], ["depth-check"], ["fmt"]])
def test_a_30_pair_chain_goes_through_every_command(tmp_path, command):
    path = tmp_path / "chain.crasp"
    path.write_text('p = "a"\nq = "b"\nx = ' + " || ".join(["p && q"] * 30) + "\n")
    arguments = command + [str(path)] + (["a b"] if command == ["run"] else [])
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 0 and "warning" not in result.output, result.output


UNITS = ["p", "x", "1", "true", '"a"', '#"a"']
JOINERS = ["&&", "||", "+", "-", "<", "==", ">="]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(UNITS), min_size=1, max_size=12), st.data())
def test_flat_chains_are_read_alike_by_both_parsers(units, data):
    """``crasp.hahn.is_flat_chain``: wherever it holds and both parsers read the text, they
    build the same tree (so the comparison of readings may skip Hahn's parse)."""
    from crasp.hahn import is_flat_chain
    from crasp.parse import parse

    joiners = data.draw(st.lists(st.sampled_from(JOINERS), min_size=len(units) - 1,
                                 max_size=len(units) - 1))
    text = units[0] + "".join(f" {j} {u}" for j, u in zip(joiners, units[1:]))
    source = text + "\n"
    tokens = hahn_parse.tokenize(source, "<t>")[0]
    if not is_flat_chain(tokens):
        return
    try:
        ours = parse(f"v = {text}\n").statements[0].expr
        theirs = hahn_parse.parse_expression_tokens(tokens, source, "<t>")
    except hahn_parse.ProgramError:
        return
    assert syntax.same_structure(ours, theirs), text


def test_flat_chain_shapes():
    from crasp.hahn import is_flat_chain

    def flat(text):
        return is_flat_chain(hahn_parse.tokenize(text + "\n", "<t>")[0])
    assert flat(" && ".join(["p"] * 1000)) and flat(" + ".join(['#"a"'] * 1000) + " > 0")
    assert flat('x - #"a" - 1 < y + 2 || p && #"b" == 0')
    for different in ['x - y + 1 > 0', '#"a" && p', "!p && q", "(p)", "2 * x + y > 0",
                      "#p > 0", "x if p else y"]:
        assert not flat(different), different
