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
second program is paired with a definition of the first program of the same type whose values
agree at every position of every sample: the one written the same way (the same expression,
its names read through the pairs already made) if there is one, else the first. Why the
preference: definitions that differ only on long strings agree on every sample (over a chain
of nested counts ``c_i = #(c_{i-1}) > #"b"``, c_12 to c_19 all agree up to length 20), and
pairing the second program's c_13 with the first one's c_12 made its terms the first's only
until the solver refuted the pair, after which nothing above it was shared: a program
against itself then cost as much as two different programs. A candidate is only a guess:
``bounded`` asks the solver to prove it at each position (given the lemmas of earlier
positions) and adds it as a lemma only when it is proved, so the lemmas are valid facts and
never change an answer; a candidate the solver refutes is dropped.
"""

from __future__ import annotations

import functools

import numpy as np

from crasp import interpret, syntax
from crasp.verify.closure import cut_to_domain
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
LONGEST_RUN = 8
"""With a domain: the longest run of one token in the run-made samples (``samples``)."""
RUN_SAMPLES = 1024
"""With a domain: how many run-made samples (``samples``)."""


def samples(alphabet: tuple[str, ...], max_length: int,
            within: syntax.Program | None = None) -> list[list[str]]:
    """``_samples``' strings, each a fresh list (the callers' own)."""
    return [list(string) for string in _samples(tuple(alphabet), max_length, within)]


@functools.lru_cache(maxsize=4)
def _samples(alphabet: tuple[str, ...], max_length: int,
             within: syntax.Program | None) -> tuple[tuple[str, ...], ...]:
    """The strings simulation runs: every string up to ``EXHAUSTIVE`` tokens (while there are
    at most 4096 of a length), ``RANDOM`` random ones up to ``RANDOM_LENGTH`` or the bound
    (at most ``LONGEST_SAMPLE``), from ``SEED``, and each random one *pumped*: cut after a
    random token, which is then repeated up to ``RANDOM_LENGTH`` tokens.

    Why pumped: random strings alternate often, and some counts part only after a long run.
    The L6 twin's counts satisfy ``#B <= 1 + 2 #A``-like inequalities on every random sample
    but not on a b a b a b b b b b b; guessed from random samples alone, such relations hold
    only up to some length, and the solver spends its effort proving them at each position
    until the one where they fail (on the L6 twin, 2 s of a 2.5 s search to length 30, ten
    times the search without lemmas; docs/benchmarks.md has the measurements).

    ``within``: a prefix-closed domain (``crasp.verify.closure``) the searches assume; each
    string is cut to its longest prefix inside it, so that what simulation guesses is what
    holds on the domain's strings. Few random strings over the whole alphabet stay inside a
    domain for long (of the L7 prefixes, the longest cut sample had 6 blocks over a, b and a
    foreign token, and the relations between the counts of the 7th were never guessed), so
    ``RUN_SAMPLES`` more are made of runs of 1 to ``LONGEST_RUN`` of one token of the domain's
    alphabet, each run of another token than the one before.

    Cached: one question asks for the same samples up to five times (definition pairs, count
    pairs and relations, in the search and again in ``bounded.proved_pairs``), and with a
    domain each time costs running it on every sample (0.16 s for the L8 prefixes, against
    0.05 s without)."""
    size = len(alphabet)
    exhaustive_length = 0
    while exhaustive_length < EXHAUSTIVE and size ** (exhaustive_length + 1) <= 4096:
        exhaustive_length += 1
    strings = [[]]
    for length in range(1, exhaustive_length + 1):
        indices = np.indices((size,) * length).reshape(length, -1).T
        strings += [[alphabet[k] for k in row] for row in indices]
    generator = np.random.default_rng(SEED)
    randoms = []
    for _ in range(RANDOM):
        length = int(generator.integers(0, min(max(max_length, RANDOM_LENGTH),
                                               LONGEST_SAMPLE) + 1))
        randoms.append([alphabet[k] for k in generator.integers(0, size, length)])
    pumped = []
    for string in randoms:
        if string:
            cut = int(generator.integers(1, min(len(string), RANDOM_LENGTH - 1) + 1))
            pumped.append(string[:cut] + [string[cut - 1]] * (RANDOM_LENGTH - cut))
    strings = strings + randoms + pumped
    if within is not None:
        tokens = [token for token in alphabet if token in within.alphabet]
        strings = cut_to_domain(strings + _runs(tokens, generator, min(
            max(max_length, RANDOM_LENGTH), LONGEST_SAMPLE)), within)
    return tuple(tuple(string) for string in strings)


def _runs(tokens: list[str], generator: np.random.Generator, length: int) -> list[list[str]]:
    """``RUN_SAMPLES`` strings of about ``length`` tokens, made of runs of one token each (1 to
    ``LONGEST_RUN`` long), consecutive runs of different tokens when there are two or more."""
    made = []
    for _ in range(RUN_SAMPLES if tokens else 0):
        string: list[str] = []
        while len(string) < length:
            choices = [t for t in tokens if not string or t != string[-1]] or tokens
            token = choices[int(generator.integers(0, len(choices)))]
            string += [token] * int(generator.integers(1, LONGEST_RUN + 1))
        made.append(string[:length])
    return made


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
               max_length: int, limit: TimeLimit = UNLIMITED,
               within: syntax.Program | None = None) -> list[tuple[int, int]]:
    """(index in ``unrolled_counts(first)``, index in ``unrolled_counts(second)``) for every
    count of ``second`` whose body agrees on the samples with the body of one of ``first``:
    counts that count the same positions, whatever their bodies' formulas (the body written
    the same way, its names read through the definitions' pairs, preferred). ``within``: as
    for ``samples``."""
    strings = samples(alphabet, max_length, within)
    sides = []
    for program in (first, second):
        signatures = _signatures(_with_bodies(program), strings, limit)
        bodies = [node.body for node in unrolled_counts(program)]
        sides.append((_definitions(program, signatures),
                      [(k, signatures[BODY.format(k)], body) for k, body in enumerate(bodies)]))
    written = _Written()
    partner = _choose(sides[0][0], sides[1][0], written, {}, rename=True)
    return [(chosen, index) for index, chosen in
            _choose(sides[0][1], sides[1][1], written, partner, rename=False).items()]


def candidate_pairs(first: syntax.Program, second: syntax.Program, alphabet: tuple[str, ...],
                    max_length: int, limit: TimeLimit = UNLIMITED,
                    within: syntax.Program | None = None) -> list[tuple[str, str]]:
    """(name in ``first``, name in ``second``) for every definition of ``second`` that agrees
    with one of ``first`` on the samples, in ``second``'s order; ``Undecided`` when ``limit``
    runs out first. ``within``: as for ``samples``."""
    strings = samples(alphabet, max_length, within)
    first_side, second_side = (_definitions(program, _signatures(program, strings, limit))
                               for program in (first, second))
    return [(chosen, name) for name, chosen in
            _choose(first_side, second_side, _Written(), {}, rename=True).items()]


Side = list[tuple[object, tuple[str, bytes], syntax.Expr]]
"""(key, signature, expression) of each definition or count body of one program."""


def _definitions(program: syntax.Program, signatures: dict[str, tuple[str, bytes]]) -> Side:
    return [(d.name, signatures[d.name], d.expr) for d in program.definitions]


def _choose(first: Side, second: Side, written: _Written, renaming: dict[str, str],
            rename: bool) -> dict:
    """For each item of ``second`` whose signature one of ``first`` has, the key of the one
    of ``first`` written the same way (``second``'s names read through ``renaming``) if its
    signature is the same, else of the first with the signature. With ``rename`` the items
    are definitions, and each pair made extends ``renaming`` for the ones after it."""
    by_signature: dict[tuple[str, bytes], object] = {}
    by_text: dict[int, object] = {}
    signature_of = {}
    for key, signature, expr in first:
        by_signature.setdefault(signature, key)
        by_text.setdefault(written.key(expr, {}), key)
        signature_of[key] = signature
    chosen = {}
    for key, signature, expr in second:
        if signature in by_signature:
            twin = by_text.get(written.key(expr, renaming))
            chosen[key] = twin if twin is not None and signature_of[twin] == signature \
                else by_signature[signature]
            if rename:
                renaming[key] = chosen[key]
    return chosen


class _Written:
    """Expressions hash-consed (``syntax.interning_key``), so that two written the same way,
    names renamed, are one object: ``key`` is its identity, found in time linear in the
    expression (no recursion, however deep)."""

    def __init__(self):
        self.table: dict = {}

    def key(self, expr: syntax.Expr, renaming: dict[str, str]) -> int:
        def intern(node: syntax.Expr, parts: list) -> syntax.Expr:
            if isinstance(node, syntax.Ref):
                node = syntax.Ref(renaming.get(node.name, node.name))
            node = syntax.with_children(node, parts)
            return self.table.setdefault(syntax.interning_key(node), node)
        return id(syntax.fold(expr, intern))
