"""Pass: two programs -> candidate equal definitions, by simulation (for the solver's lemmas).

Why. A decompiled or rewritten program computes the same intermediate values as the original
under other names and other formulas (``L2_A3 = (t && #"a" == 0 || t && #"a" >= 1) && ...``
is ``A3``). The answers' terms then contain sums of ``If(body, 1, 0)`` over all positions
whose bodies are equal only after reasoning; z3 would rediscover that at every length, by case
splits that grow with the length. Proving the bodies equal *position by position*, lowest
definitions first, and adding each proved equality as a lemma, leaves the solver only
congruence and linear arithmetic for the counts above them (this is SAT sweeping, as in
hardware equivalence checkers).

Derivation. Candidates come from simulation: every definition of either program is run by the
interpreter on the same sample strings (every string of length <= ``EXHAUSTIVE`` over the
alphabet and ``RANDOM`` random ones up to ``RANDOM_LENGTH`` or the bound); a definition of the
second program is paired with the first definition of the first program of the same type
whose values agree at every position of every sample. A candidate is only a guess: ``bounded`` asks the solver to
prove it at each position (given the lemmas of earlier positions) and adds it as a lemma only
when it is proved, so the lemmas are valid facts and never change an answer; a candidate the
solver refutes is dropped.
"""

from __future__ import annotations

import numpy as np

from crasp import interpret, syntax
from crasp.verify.encode import (count_nodes, is_token_only, token_only_definitions,
                                 with_definitions)
from crasp.verify.solver import UNLIMITED, TimeLimit

EXHAUSTIVE = 4
RANDOM = 256
RANDOM_LENGTH = 64
"""Random samples are up to this long (or the bound, if longer, up to ``LONGEST_SAMPLE``):
definitions that hold only after many alternations (the L_k and E_k families) must hold
somewhere in the samples, or they would pair with a definition that is always false."""
LONGEST_SAMPLE = 1024
"""The longest random sample, whatever the bound: the samples only guess lemmas, and with a
bound of 10^5 they would hold 256 x 10^5 positions per definition (gigabytes) before the
solver or the time limit is reached."""
SEED = 0


def samples(alphabet: tuple[str, ...], max_length: int) -> list[list[str]]:
    """The strings simulation runs: every string up to ``EXHAUSTIVE`` tokens (while there are
    at most 4096 of a length), and ``RANDOM`` random ones up to ``RANDOM_LENGTH`` or the
    bound (at most ``LONGEST_SAMPLE``), from ``SEED``."""
    size = len(alphabet)
    exhaustive_length = 0
    while exhaustive_length < EXHAUSTIVE and size ** (exhaustive_length + 1) <= 4096:
        exhaustive_length += 1
    strings = [[]]
    for length in range(1, exhaustive_length + 1):
        indices = np.indices((size,) * length).reshape(length, -1).T
        strings += [[alphabet[k] for k in row] for row in indices]
    generator = np.random.default_rng(SEED)
    for _ in range(RANDOM):
        length = int(generator.integers(0, min(max(max_length, RANDOM_LENGTH),
                                               LONGEST_SAMPLE) + 1))
        strings.append([alphabet[k] for k in generator.integers(0, size, length)])
    return strings


def _signatures(program: syntax.Program, strings: list[list[str]], limit: TimeLimit
                ) -> dict[str, tuple[str, bytes]]:
    """Each definition's type and values at every position of ``strings`` (BOS and the
    tokens), as bytes: equal exactly when the values are (one dtype per type), and hashed in
    time linear in the positions (a list of Python integers per definition took 4 s of the
    6.5 s of a 1,600-definition program's simulation)."""
    limit.expire("simulation was evaluating a program on its sample strings")
    evaluation = interpret.evaluate(program, strings)
    width = next(iter(evaluation.columns.values())).shape[1]
    valid = np.arange(width)[None, :] <= evaluation.lengths[:, None]   # BOS and the tokens
    limit.expire("simulation was comparing the definitions' values")
    return {d.name: (d.type, np.asarray(evaluation.columns[d.name], dtype=np.int64)[valid]
                     .tobytes()) for d in program.definitions}


BODY = "\0body of count {}"
"""The name a count's body gets in the copy of a program that simulation runs (no program
name can contain a NUL)."""


def unrolled_counts(program: syntax.Program) -> list[syntax.Count]:
    """The counts the encoder keeps a running value of (``crasp.verify.encode``): unguarded,
    and reading more than the token."""
    pure = token_only_definitions(program)
    return [node for node in count_nodes(program)
            if node.relation is None and not is_token_only(node, pure)]


def _with_bodies(program: syntax.Program) -> syntax.Program:
    """``program`` with one more definition per unrolled count: its body."""
    return with_definitions(program, BODY, [node.body for node in unrolled_counts(program)],
                            syntax.BOOL)


def body_pairs(first: syntax.Program, second: syntax.Program, alphabet: tuple[str, ...],
               max_length: int, limit: TimeLimit = UNLIMITED) -> list[tuple[int, int]]:
    """(index in ``unrolled_counts(first)``, index in ``unrolled_counts(second)``) for every
    count of ``second`` whose body agrees on the samples with the body of one of ``first``:
    counts that count the same positions, whatever their bodies' formulas."""
    strings = samples(alphabet, max_length)
    bodies = [[(int(name.split()[-1]), signature)
               for name, signature in _signatures(_with_bodies(p), strings, limit).items()
               if name.startswith(BODY.format(""))] for p in (first, second)]
    first_index: dict[tuple[str, bytes], int] = {}
    for index, signature in bodies[0]:
        first_index.setdefault(signature, index)
    return [(first_index[signature], index) for index, signature in bodies[1]
            if signature in first_index]


def candidate_pairs(first: syntax.Program, second: syntax.Program, alphabet: tuple[str, ...],
                    max_length: int, limit: TimeLimit = UNLIMITED) -> list[tuple[str, str]]:
    """(name in ``first``, name in ``second``) for every definition of ``second`` that agrees
    with one of ``first`` on the samples, in ``second``'s order; ``Undecided`` when ``limit``
    runs out first."""
    strings = samples(alphabet, max_length)
    first_names: dict[tuple[str, bytes], str] = {}
    for name, signature in _signatures(first, strings, limit).items():
        first_names.setdefault(signature, name)
    return [(first_names[signature], name)
            for name, signature in _signatures(second, strings, limit).items()
            if signature in first_names]
