"""Seeded random C-RASP programs of an exact depth, for the zoo (``crasp zoo build --random``).

A program of depth d is a tower of d levels over the alphabet {a, b}. Level l >= 1 defines

    c{l} = #BODY                      BODY: a token test (l = 1), or a Boolean of level l - 1,
                                      possibly negated or combined with a token test
    p{l} = A * c{l} + B * #"t" + C OP 0     a comparison (A != 0, so the count is read)

and, with some probability, combines ``p{l}`` with the Boolean of an earlier level by && or ||.
The answer is the Boolean of level d, so the program has depth exactly d (the count of level l
reads a Boolean of depth l - 1). The same seed gives the same programs on every machine
(``numpy.random.default_rng``).
"""

from __future__ import annotations

import numpy as np

ALPHABET = ("a", "b")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def random_program(seed: int, depth: int) -> str:
    """The text of a random program of exactly ``depth`` >= 1 levels (module docstring)."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    rng = np.random.default_rng(seed)
    token = lambda: f'"{ALPHABET[rng.integers(len(ALPHABET))]}"'  # noqa: E731
    lines = [f"// random program: seed {seed}, depth {depth}",
             "alphabet " + " ".join(f'"{t}"' for t in ALPHABET)]
    booleans: list[str] = []   # the Boolean of each level so far
    for level in range(1, depth + 1):
        if level == 1:
            body = token()
        else:
            below = booleans[-1]
            body = [below, f"!{below}", f"{below} && {token()}",
                    f"{below} || {token()}"][rng.integers(4)]
        lines.append(f"c{level} = #{body}" if level == 1 or body == booleans[-1]
                     else f"c{level} = #({body})")
        a = int(rng.choice([-2, -1, 1, 2]))
        b = int(rng.integers(-2, 3))
        c = int(rng.integers(-2, 3))
        terms = f"{a} * c{level}" if a != 1 else f"c{level}"
        if b:
            terms += f" {'+' if b > 0 else '-'} {abs(b)} * #{token()}"
        comparison = f"{terms} {COMPARISONS[rng.integers(len(COMPARISONS))]} {c}"
        if booleans and rng.random() < 0.3:
            other = booleans[rng.integers(len(booleans))]
            comparison = f"({comparison}) {['&&', '||'][rng.integers(2)]} {other}"
        lines.append(f"p{level} = {comparison}")
        booleans.append(f"p{level}")
    return "\n".join(lines) + "\n"
