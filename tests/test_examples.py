"""Every example program against an independent membership function, on all strings up to
length 10 over its alphabet (regular expressions and explicit counting, never the interpreter)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import crasp
from crasp.languages.programs import PROGRAMS_DIR

EXAMPLES = PROGRAMS_DIR
MAX_LENGTH = 10


def blocks(word: str) -> list[str]:
    return re.findall(r"a+|b+", word)


def in_L(k: int):
    return lambda w: len(blocks(w)) == k and w.startswith("a") and set(w) <= {"a", "b"}


def dyck(w: str, bound: int | None = None) -> bool:
    height = 0
    for c in w:
        height += 1 if c == "(" else -1
        if height < 0 or (bound is not None and height > bound):
            return False
    return height == 0


def contains_ab(w: str) -> bool:
    return "ab" in w


MEMBERSHIP = {
    "dyck1": dyck,
    "dyck2_bounded": lambda w: dyck(w, bound=2),
    "anbn": lambda w: re.fullmatch(r"(a*)(b*)", w) is not None
    and w.count("a") == w.count("b"),
    "anbncn": lambda w: re.fullmatch(r"a*b*c*", w) is not None
    and w.count("a") == w.count("b") == w.count("c"),
    "majority": lambda w: w.count("a") > w.count("b"),
    "contains_ab": contains_ab,
    "aa_star": lambda w: re.fullmatch(r"(aa)*", w) is not None,
    **{f"L{k}": in_L(k) for k in range(1, 7)},
}


def stated_depth(path: Path) -> int:
    return int(re.search(r"^// depth: (\d+)$", path.read_text(), re.MULTILINE).group(1))


def all_strings(alphabet, max_length):
    for length in range(max_length + 1):
        yield from itertools.product(alphabet, repeat=length)


@pytest.mark.parametrize("name", sorted(MEMBERSHIP))
def test_example_recognizes_its_language(name):
    path = EXAMPLES / f"{name}.crasp"
    program = crasp.load_program(path)
    assert crasp.depth_of(program) == stated_depth(path)
    strings = [list(s) for s in all_strings(program.alphabet, MAX_LENGTH)]
    accepted = crasp.evaluate(program, strings).accept
    membership = MEMBERSHIP[name]
    wrong = [("".join(s), bool(a)) for s, a in zip(strings, accepted)
             if a != membership("".join(s))]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("k", range(3, 9))
def test_prediction_program_solves_the_prediction_task(k):
    """On every prefix of every string of L_k up to length 10 (and longer ones for big k), the
    program's output equals prefix membership; its depth is k - 2."""
    path = EXAMPLES / f"L{k}_predict.crasp"
    program = crasp.load_program(path)
    assert crasp.depth_of(program) == k - 2 == stated_depth(path)
    length = max(MAX_LENGTH, k + 4)
    strings = [list(s) for s in all_strings("ab", length) if in_L(k)("".join(s))]
    assert strings
    output = crasp.evaluate(program, strings).output
    for row, tokens in enumerate(strings):
        expected = [in_L(k)("".join(tokens[:i + 1])) for i in range(len(tokens))]
        assert output[row, :len(tokens)].tolist() == expected, "".join(tokens)


def test_every_example_states_its_language_and_depth():
    for path in EXAMPLES.glob("*.crasp"):
        text = path.read_text()
        assert re.search(r"^// language: .+", text, re.MULTILINE), path
        assert crasp.depth_of(crasp.load_program(path)) == stated_depth(path), path
