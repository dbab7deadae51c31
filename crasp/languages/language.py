"""The record of one language: its alphabet, a seeded generator, an oracle and prefix labels.

A language is a plain dataclass of functions over *ids* (int8 numpy arrays indexing the
alphabet), so that generation and labelling run at numpy speed; the public methods
(``sample``, ``contains``, ``prefix_labels``) speak token lists.

Two independent implementations decide membership, and the tests hold them to each other and to
the reference program: ``oracle`` (a regular expression, an automaton or explicit counting, on
one string) and ``labeller`` (a vectorized scan that answers for every prefix at once).
Neither touches the C-RASP interpreter, except for a language defined by a program, whose
labels are by definition the program's answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from crasp.errors import CraspError, InputError

Ids = np.ndarray
"""A string as int8 indices into its language's alphabet."""
MAX_ALPHABET = 127
"""The most tokens a language's alphabet can have: its ids are int8 (one byte per token, which
the datasets' duplicate keys rely on too)."""

MAX_LENGTH = 1_000_000
"""The longest string drawn: far above any length here (the paper tests up to 400), so that a
mistyped bound is one message, not a hang. A bin's lengths are enumerated (a length is drawn
uniformly among those that hold strings), so the work grows with the bound: a bin 21:10**30
never returned."""

NEAR_MISS_TRIES = 200
"""Single-edit perturbations tried before giving up on a near-miss negative."""

def choose_weighted(weights: Sequence[int], rng: np.random.Generator) -> int:
    """An index drawn with probability proportional to exact integer ``weights`` (not all 0),
    however large: each share is an exactly rounded int / int division, and a draw that
    rounding carries past the last share takes the last positive weight."""
    total = sum(weights)
    shares = np.cumsum([weight / total for weight in weights])
    index = int(np.searchsorted(shares, rng.random(), side="right"))
    return index if index < len(weights) else max(i for i, w in enumerate(weights) if w)


@dataclass(frozen=True)
class Lengths:
    """The lengths that hold a language's strings: every multiple of ``step`` from ``shortest``
    on (``shortest`` itself a multiple of ``step``). Every built-in language's lengths have this
    shape (L_k and E_k: from k; Dyck: the even ones; a^n b^n c^n: the multiples of 3); its
    test distributions draw at the same lengths (tests/test_lengths.py holds every language's
    ``support_size(n) > 0`` to ``holds(n)``). It is stated, not counted, because counting is
    costly: ``support_size`` is exact (a Catalan number for Dyck), and testing it at every
    length of a bin took 43 s for E_4 at 1:2000 (its count was then a sum over the e's)."""

    shortest: int = 0
    step: int = 1

    def holds(self, n: int) -> bool:
        return n >= self.shortest and n % self.step == 0

    def within(self, lo: int, hi: int) -> np.ndarray:
        """The lengths in [lo, hi] that hold strings, ascending, in time linear in their
        number."""
        first = max(lo, self.shortest)
        first += -first % self.step
        return np.arange(first, hi + 1, self.step, dtype=np.int64)

    @property
    def note(self) -> str:
        """The lengths in words, for messages ("length >= 3", "even length")."""
        if self.step == 1:
            return "any length" if self.shortest == 0 else f"length >= {self.shortest}"
        words = "even length" if self.step == 2 else f"length divisible by {self.step}"
        return words if self.shortest == 0 else f"{words} >= {self.shortest}"


UNIFORM = "uniform"
"""The name, as a test distribution, of the generator a language is defined with: for L_k
and E_k the paper's uniform composition (E_k: of the letters); for the others whatever their
generator's law is (most are uniform over the positive strings of each length)."""


@dataclass(frozen=True)
class StringDistribution:
    """Another way to draw a language's strings, for test bins (``LO:HI@NAME``): the same
    strings' labels and oracle, other probabilities. ``support_size`` and ``sample_ids`` obey
    the contract of the ``Language`` fields of the same names; ``reaches(ids)`` says whether
    ``sample_ids`` can return the string ``ids`` of the language."""

    name: str
    definition: str
    support_size: Callable[[int], int]
    sample_ids: Callable[[int, np.random.Generator], Ids]
    reaches: Callable[[Ids], bool]


@dataclass(frozen=True)
class ReferenceProgram:
    """A C-RASP program for a language: a shipped file under ``crasp/programs/``, or text made
    in code.

    Both are set for the L_k and E_k programs that ship (the tests check that the file equals
    the generated text); a file is read only when its text is needed.
    """

    path: Path | None
    generated: str | None = None

    @property
    def source(self) -> str:
        if self.path is not None and self.path.exists():
            return self.path.read_text(encoding="utf-8")
        if self.generated is None:
            raise CraspError(f"the reference program {self.path} is missing")
        return self.generated

    @property
    def origin(self) -> str:
        """Where the program comes from, for tables: a path, or "generated"."""
        if self.path is not None and self.path.exists():
            return _relative(self.path)
        return "generated"

    def load(self):
        import crasp

        return crasp.parse_program(self.source, self.origin)


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


@dataclass(frozen=True, eq=False)
class Language:
    """A named language with everything the prediction task and the datasets need.

    ``support_size(n)`` is the number of distinct strings ``sample_ids`` can return at length
    n (0 where it can return none); the dataset builder uses it to refuse impossible requests.
    ``lengths`` says where it is not 0.
    ``sample_ids(n, rng)`` draws one string of length n (only called where the support is not
    empty); ``oracle(tokens)`` decides membership of one string; ``labeller(ids)`` gives the
    membership of every nonempty prefix; ``batch_labeller`` (optional) labels many strings in
    one call. ``distributions`` are the named test distributions besides ``uniform`` (the
    generator itself); ``under(name)`` is the language drawing from one of them, and its
    ``reaches`` says which strings of the language that distribution can draw (None: all
    the generator's).
    """

    name: str
    alphabet: tuple[str, ...]
    description: str
    support_size: Callable[[int], int]
    sample_ids: Callable[[int, np.random.Generator], Ids]
    oracle: Callable[[Sequence[str]], bool]
    labeller: Callable[[Ids], np.ndarray]
    lengths: Lengths
    expressible: bool
    recognition_depth: int | None
    prediction_depth: int | None
    note: str = ""
    program: ReferenceProgram | None = None
    prediction_program: ReferenceProgram | None = None
    prefixes_program: ReferenceProgram | None = None
    """The nonempty prefixes of the language's strings, where the prediction task is specified
    (``crasp equiv --domain``); every built-in language that C-RASP expresses has one."""
    batch_labeller: Callable[[list[Ids]], list[np.ndarray]] | None = field(default=None,
                                                                         repr=False)
    distributions: dict[str, StringDistribution] = field(default_factory=dict, repr=False)
    reaches: Callable[[Ids], bool] | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ the trainer's contract

    @property
    def program_path(self) -> Path | None:
        """The shipped recognition program (None when there is none or it is made in code)."""
        return self._shipped(self.program)

    @property
    def prediction_program_path(self) -> Path | None:
        """The shipped program that solves the prediction task at ``prediction_depth``."""
        return self._shipped(self.prediction_program)

    @staticmethod
    def _shipped(program: ReferenceProgram | None) -> Path | None:
        if program is None or program.path is None or not program.path.exists():
            return None
        return program.path

    def sample(self, length: int, rng: np.random.Generator) -> list[str]:
        """One string of exactly ``length`` tokens: a positive one for every built-in language
        (raises ``CraspError`` where the language has no string of that length)."""
        return self.decode(self.draw(length, rng))

    def contains(self, tokens: Sequence[str]) -> bool:
        """The membership oracle."""
        self.encode(tokens)  # rejects a token outside the alphabet
        return bool(self.oracle(tuple(tokens)))

    def prefix_labels(self, tokens: Sequence[str]) -> np.ndarray:
        """bool [len(tokens)]: label i says whether tokens[:i+1] is in the language."""
        return self.labels_of([self.encode(tokens)])[0]

    @property
    def distribution_definitions(self) -> dict[str, str]:
        """Each test distribution's definition, by name."""
        return {UNIFORM: "the language's own generator",
                **{name: d.definition for name, d in self.distributions.items()}}

    def under(self, distribution: str) -> Language:
        """This language with its strings drawn from the named test distribution (same name,
        oracle and labels); ``uniform`` is the language itself."""
        if distribution == UNIFORM:
            return self
        if distribution not in self.distributions:
            others = "".join(f", {name}" for name in self.distributions)
            raise CraspError(f"{self.name} has no test distribution {distribution!r}; it has "
                             f"uniform (its own generator){others}")
        chosen = self.distributions[distribution]
        return replace(self, support_size=chosen.support_size, sample_ids=chosen.sample_ids,
                       reaches=chosen.reaches, distributions={})

    # ------------------------------------------------------------------ ids

    @cached_property
    def _index(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.alphabet)}

    @cached_property
    def _tokens(self) -> np.ndarray:
        return np.array(self.alphabet, dtype=object)

    def encode(self, tokens: Sequence[str]) -> Ids:
        try:
            return np.fromiter((self._index[t] for t in tokens), dtype=np.int8, count=len(tokens))
        except KeyError:
            bad = next(t for t in tokens if t not in self._index)
            raise InputError(f"token {bad!r} is not in the alphabet of {self.name} "
                             f"{{{', '.join(self.alphabet)}}}") from None

    def decode(self, ids: Ids) -> list[str]:
        return self._tokens[ids].tolist()

    def labels_of(self, strings: list[Ids]) -> list[np.ndarray]:
        if self.batch_labeller is not None:
            return self.batch_labeller(strings)
        return [self.labeller(ids) for ids in strings]

    # ------------------------------------------------------------------ generation

    def lengths_in(self, lo: int, hi: int) -> np.ndarray:
        """The lengths in [lo, hi] that hold strings: the paper draws a length uniformly among
        them (for L_k, uniform in [max(lo, k), hi])."""
        if hi > MAX_LENGTH:
            raise CraspError(f"lengths {lo}:{hi}: strings are drawn up to length "
                             f"{MAX_LENGTH:,}")
        return self.lengths.within(lo, hi)

    @property
    def lengths_note(self) -> str:
        return self.lengths.note

    def draw(self, length: int, rng: np.random.Generator) -> Ids:
        if length > MAX_LENGTH:
            raise CraspError(f"length {length}: strings are drawn up to length {MAX_LENGTH:,}")
        if not self.lengths.holds(length):
            raise CraspError(f"{self.name} has no string of length {length} "
                             f"(its strings have {self.lengths_note})")
        return self.sample_ids(length, rng)

    def near_miss(self, length: int, rng: np.random.Generator) -> Ids:
        """A string of ``length`` outside the language, one edit away from a drawn string.

        The edit is a substitution of one token, or a swap of two adjacent different tokens
        (which keeps the letter counts, so a counting language cannot tell it by counts alone).
        """
        for _ in range(NEAR_MISS_TRIES):
            ids = self.draw(length, rng).copy()
            if length == 0:
                break
            changes = np.flatnonzero(ids[1:] != ids[:-1])
            if len(changes) and rng.random() < 0.5:
                i = changes[rng.integers(len(changes))]
                ids[i], ids[i + 1] = ids[i + 1], ids[i]
            else:
                i = rng.integers(length)
                ids[i] = (ids[i] + rng.integers(1, len(self.alphabet))) % len(self.alphabet)
            if not self.oracle(tuple(self.decode(ids))):
                return ids
        raise CraspError(f"{self.name}: found no near-miss negative of length {length} in "
                         f"{NEAR_MISS_TRIES} single-token edits; ask for no negatives "
                         "(--negatives 0) or use other lengths")

    # ------------------------------------------------------------------ description

    @property
    def source(self) -> str:
        """Where the reference (recognition) program comes from, for tables."""
        return "-" if self.program is None else self.program.origin

    @property
    def prediction_source(self) -> str:
        """Where the program of the prediction task comes from, for tables."""
        return "-" if self.prediction_program is None else self.prediction_program.origin

    @property
    def prefixes_source(self) -> str:
        """Where the program of the task's strings (the prefixes) comes from, for tables."""
        return "-" if self.prefixes_program is None else self.prefixes_program.origin
