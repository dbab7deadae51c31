"""The readability pass (``crasp.decompile.readable``): decompiled programs written for reading.

On every compiled example and on generated programs the readable program answers as the
decompiler's own output (and as the original) at every position of every short string, with
the original's depth, never in more lines; ``==`` comes back from pairs of inequalities, mixed
``&&``/``||`` chains are parenthesized, definitions are named after what they compute.
"""

from __future__ import annotations

import itertools
import re
import statistics

import numpy as np
import pytest
from hypothesis import given, settings

import crasp
from crasp.compiler import compile_program
from crasp.compiler.random_models import random_model
from crasp.decompile import decompile_model
from strategies import programs
from test_decompile import COMPILABLE

pytestmark = pytest.mark.usefixtures("one_torch_thread")

EXAMPLES = COMPILABLE   # every example without positional predicates or local relations


def lines(text: str) -> int:
    return sum(1 for line in text.splitlines()
               if line.strip() and not line.strip().startswith("//"))


def same_answers(first: crasp.Program, second: crasp.Program, max_length: int) -> bool:
    inputs = [list(w) for n in range(max_length + 1)
              for w in itertools.product(first.alphabet, repeat=n)]
    a, b = crasp.evaluate(first, inputs), crasp.evaluate(second, inputs)
    return np.array_equal(a.output, b.output) and np.array_equal(a.accept, b.accept)


def both(program: crasp.Program):
    model = compile_program(program)
    return decompile_model(model, readable=False), decompile_model(model)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_stays_exact_at_its_depth_and_never_longer(path):
    original = crasp.load_program(path)
    raw, readable = both(original)
    assert same_answers(original, readable.program, 6)
    assert same_answers(raw.program, readable.program, 6)
    assert crasp.depth_of(readable.program) == crasp.depth_of(original)
    assert lines(readable.text) <= lines(raw.text)
    assert crasp.parse_program(readable.text) == readable.program
    assert not crasp.analyze(readable.program).unused


def test_the_examples_median_line_ratio_is_at_most_1_3():
    ratios = [lines(decompile_model(compile_program(crasp.load_program(p))).text)
              / lines(p.read_text(encoding="utf-8")) for p in EXAMPLES]
    assert statistics.median(ratios) <= 1.3


@settings(max_examples=25, deadline=None)
@given(programs(alphabet=("a", "b"), max_depth=3, max_definitions=6))
def test_generated_programs_stay_exact_and_never_longer(text):
    raw, readable = both(crasp.parse_program(text))
    assert same_answers(raw.program, readable.program, 5)
    assert lines(readable.text) <= lines(raw.text)
    assert crasp.depth_of(readable.program) <= crasp.depth_of(raw.program)


@pytest.mark.parametrize("seed", [2, 12, 26])
def test_models_no_program_made_stay_exact(seed):
    model = random_model(seed)
    raw, readable = decompile_model(model, readable=False), decompile_model(model)
    assert same_answers(raw.program, readable.program, 5)
    assert lines(readable.text) <= lines(raw.text)


def test_equalities_names_and_parentheses():
    anbn = both(crasp.load_program("examples/anbn.crasp"))[1]
    assert anbn.text.splitlines()[3:] == ['a_after_b = "a" && #"b" >= 1',
                                          'answer = (#"a" == #"b") && #a_after_b == 0']
    dyck = both(crasp.load_program("examples/dyck1.crasp"))[1].text
    assert '#"(" == #")"' in dyck and ">=" not in dyck.split("answer =")[1]
    program = crasp.parse_program('alphabet "a" "b"\nx = ("a" && #"b" > 1) || #"a" != 2\n')
    readable = both(program)[1]
    assert same_answers(program, readable.program, 6)
    for line in readable.text.splitlines():   # a mixed chain: every operand in parentheses
        if "&&" in line and "||" in line:
            assert re.search(r"\) \|\| |\|\| \(|\) && |&& \(", line), line
    assert "!=" in readable.text or "==" in readable.text
    assert crasp.fmt.format_expr(crasp.parse_program('x = "a" && "b" || "a"\n').answer.expr,
                                 group_mixed=True) == '("a" && "b") || "a"'


FALSE_BODIES = ['false', '"a" && !"a"', '"a" && "b"', '!("a" || !"a")']
SHAPES = ['{k} * #p + #"a" >= 1', '#"b" + {k} * #p <= 2', '#p == 0', '{k} * #p >= 1',
          '#"a" - {k} * #p > #"b"']


@pytest.mark.parametrize("body", FALSE_BODIES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [1, 3])
def test_a_count_of_a_body_no_position_satisfies_leaves_its_sums(body, shape, k):
    """A count whose body minimizes to false (a literal, a contradiction, two tokens at once)
    is 0 at every position: the readable program drops its term (and the comparison, where
    nothing else is left, becomes a constant), with the same answers everywhere."""
    from crasp.decompile.readable import readable_program
    program = crasp.parse_program(f'alphabet "a" "b"\np = {body}\n'
                                  f'x = {shape.format(k=k)} || "b"\n')
    readable = readable_program(program)
    assert "#p" not in "\n".join(readable.lines), readable.lines
    rewritten = crasp.parse_program('alphabet "a" "b"\n' + "\n".join(readable.lines))
    assert same_answers(program, rewritten, 6)
