"""Length-binned datasets for the prediction task: a training bin split into train and
validation, and test bins; seeded, deterministic, and with no evaluation string seen in training.

How strings are drawn (the paper's rule, generalized): a length uniformly among the lengths of
the bin that hold strings (for L_k, uniform in [max(lo, k), hi]), then a string of that length
from the language's generator; with ``negative_rate`` > 0, each string is instead a near-miss
negative (one edit from a positive) with that probability, for the recognition task.

Guarantees:
- The train and validation splits partition the ``n_train`` strings drawn from the training
  bin by distinct string (all copies of a string go to the same side), so no validation string
  is a training string.
- A test string never equals a string drawn from the training bin (train or validation), so a
  test bin that overlaps the training bin (the paper's first test bin equals it) holds fresh
  strings only; excluded draws are redrawn.
- Duplicates inside a split are allowed, as in the paper's data, and counted; ``distinct=True``
  forbids them. A request that cannot be met (more distinct strings than a bin holds, a test bin
  whose every string is a training string) raises ``CraspError`` at once, and a draw that keeps
  missing gives up after ``MAX_ATTEMPTS_PER_STRING`` tries per string instead of looping.
- Each split has its own random stream, seeded by (seed, role, lo, hi): adding or removing a
  test bin changes no other split, and the same arguments give the same task.

Test distributions: a test bin ``LO:HI@NAME`` draws its strings from the language's named
test distribution NAME (``Language.under``; for L_k and E_k ``skewed`` and ``extreme``, see
``crasp.languages.distributions``), labelled by the same oracle; its split is named
``LO:HI@NAME`` and its stream is seeded by (seed, role, lo, hi, crc32(NAME)). ``LO:HI`` and
``LO:HI@uniform`` are the language's own generator, with the stream and the name ``LO:HI``.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Sequence

import numpy as np

from crasp.errors import CraspError
from crasp.languages.language import MAX_LENGTH, UNIFORM, Ids, Language
from crasp.util.list_text import split_list

TRAIN_ROLE, TEST_ROLE, PARTITION_ROLE = 0, 1, 2
MAX_ATTEMPTS_PER_STRING = 100
MAX_STRINGS = 100_000_000
"""The most strings a bin (or a split) can be asked for: far above any dataset here, so that a
mistyped count is one message, not numpy's allocation error (``--n 10000000000000`` asked for
72.8 TiB of lengths)."""
ATTEMPTS_SLACK = 1000
MAX_TOKENS = 200_000_000
"""The most tokens a dataset may ask for, counted as its strings times their bins' longest
length: 50 times the paper's largest (10,000 strings of up to 400 tokens in each of five
bins), and about 2 GB here (a token is an int8 id, a label byte and a reference in its
string's token list). ``--n 100000`` over a bin 999000:1000000 asked for 10**11 and ran out
of memory after a minute of drawing."""

Bin = tuple[int, int]


class BinSpec(NamedTuple):
    """A test bin as written ``LO:HI[@NAME]``: inclusive lengths and the test distribution its
    strings come from."""

    lo: int
    hi: int
    distribution: str = UNIFORM

    @property
    def bounds(self) -> Bin:
        return self.lo, self.hi

    @property
    def name(self) -> str:
        """``LO:HI`` for the language's own generator, ``LO:HI@NAME`` otherwise."""
        plain = format_bin(self.bounds)
        return plain if self.distribution == UNIFORM else f"{plain}@{self.distribution}"


@dataclass
class Split:
    """Strings of one split with their per-token labels (label i: prefix up to token i is in
    the language); ``duplicates`` = number of strings minus number of distinct strings."""

    name: str
    lo: int
    hi: int
    strings: list[list[str]]
    labels: list[np.ndarray]
    duplicates: int = 0

    def __len__(self) -> int:
        return len(self.strings)

    @property
    def distribution(self) -> str:
        """The test distribution its strings come from, as its name says (``LO:HI@NAME``)."""
        return self.name.partition("@")[2] or UNIFORM


@dataclass
class Task:
    """A training bin split into ``train`` and ``val``, and one split per test bin.

    ``test_bins`` holds the bounds of each test split, in order; a split's name says its
    distribution.
    """

    language: str
    vocab: tuple[str, ...]
    train: Split
    val: Split
    tests: list[Split]
    seed: int
    train_bin: Bin
    val_fraction: float
    negative_rate: float = 0.0
    distinct: bool = False
    test_bins: list[Bin] = field(default_factory=list)

    @property
    def splits(self) -> list[Split]:
        return [self.train, self.val, *self.tests]


def format_bin(bin_: Bin) -> str:
    return f"{bin_[0]}:{bin_[1]}"


_BIN = re.compile(r"\s*(\d+)\s*(?::|_to_|-)\s*(\d+)\s*(?:@\s*([A-Za-z][\w-]*)\s*)?")


def parse_test_bin(text: str) -> BinSpec:
    """``"351:400@skewed"`` -> BinSpec(351, 400, "skewed"); ``"201:250"`` -> the uniform
    BinSpec(201, 250); ``201_to_250`` (the paper's) and ``201-250`` too. The one bin parser."""
    match = _BIN.fullmatch(str(text))
    if not match:
        raise CraspError(f"bad bin {text!r}: write LO:HI with 0 <= LO <= HI, like 201:250, "
                         "or LO:HI@DISTRIBUTION for a test bin, like 351:400@skewed")
    return BinSpec(*check_bin((int(match[1]), int(match[2]))), match[3] or UNIFORM)


def parse_test_bins(text: str, what: str = "--bins") -> list[BinSpec]:
    """``"251:300,351:400@skewed"`` -> [BinSpec(251, 300), BinSpec(351, 400, "skewed")]; an
    empty item (``1:5,,6:8``) is refused naming ``what``, the option that gave the text."""
    bins = [parse_test_bin(part) for part in split_list(text, what)]
    if not bins:
        raise CraspError(f"no bins in {text!r}: write LO:HI,LO:HI,..., like 1:50,51:100")
    return bins


def parse_bin(text: str) -> Bin:
    """``"201:250"`` -> (201, 250), inclusive: a bin of lengths alone (a training bin)."""
    return lengths_only(parse_test_bin(text), text)


def parse_bins(text: str) -> list[Bin]:
    """``"1:50,51:100"`` -> [(1, 50), (51, 100)]: bins of lengths alone."""
    return [lengths_only(test_bin, text) for test_bin in parse_test_bins(text)]


def lengths_only(test_bin: BinSpec, text: str, what: str = "here a bin") -> Bin:
    """The bounds of a bin that must not name a distribution (``text``: where it was
    written; ``what``: the bin's role, for the message)."""
    if test_bin.distribution != UNIFORM:
        raise CraspError(f"bad bin {test_bin.name!r} in {text!r}: {what} takes no test "
                         f"distribution (@{test_bin.distribution}); write LO:HI")
    return test_bin.bounds


def check_bin(bin_: Sequence[int] | str) -> Bin:
    """A bin of lengths given as ``"11:20"`` or ``(11, 20)`` -> (11, 20), checked."""
    if isinstance(bin_, str):
        return parse_bin(bin_)
    lo, hi = (int(v) for v in bin_)
    if not 0 <= lo <= hi <= MAX_LENGTH:
        raise CraspError(f"bad bin {lo}:{hi}: a bin LO:HI needs 0 <= LO <= HI <= "
                         f"{MAX_LENGTH:,} (the longest string drawn here)")
    return lo, hi


def build_task(language: Language | str, train_bin: Sequence[int] | str,
               test_bins: Sequence[BinSpec | Sequence[int] | str] | str, n_train: int,
               n_test: int,
               val_fraction: float = 0.2, seed: int = 0, *, negative_rate: float = 0.0,
               distinct: bool = False) -> Task:
    """Draw and label the train, validation and test splits (see the module docstring).

    Bins are ``"11:20"`` or ``(11, 20)``. A test bin is a ``BinSpec``, a pair (lo, hi) (the
    language's own generator), or its text ``LO:HI[@NAME]``; ``test_bins`` may also be one
    string ``"21:40,41:80@skewed"``.

    >>> task = build_task("L3", "11:20", "21:40,41:80", n_train=50, n_test=20, seed=0)
    >>> len(task.train.strings) + len(task.val.strings), [s.name for s in task.tests]
    (50, ['21:40', '41:80'])
    """
    if isinstance(language, str):
        from crasp.languages.registry import get_language

        language = get_language(language)
    train_bin = check_bin(train_bin)
    if isinstance(test_bins, str):
        test_bins = parse_test_bins(test_bins)
    test_specs = [as_test_bin(b) for b in test_bins]
    test_drawers = {d: _Drawer(language.under(d), negative_rate, distinct)
                    for d in dict.fromkeys(b.distribution for b in test_specs)}
    _check_request(n_train, n_test, val_fraction, seed, negative_rate)
    check_size(n_train, train_bin, n_test, [spec.bounds for spec in test_specs])
    drawer = _Drawer(language, negative_rate, distinct)
    drawn = drawer.draw(train_bin, n_train, _rng(seed, TRAIN_ROLE, train_bin), set(),
                        "the training bin")
    n_val = int(n_train * val_fraction + 0.5)
    train_rows, val_rows = _partition(drawn, n_val, _rng(seed, PARTITION_ROLE, train_bin),
                                      language, train_bin)
    seen = {ids.tobytes() for ids in drawn}
    tests = []
    for spec in test_specs:
        test_drawer = test_drawers[spec.distribution]
        what = "the test bin" if spec.distribution == UNIFORM else \
            f"the {spec.distribution} test bin"
        strings = test_drawer.draw(spec.bounds, n_test, _test_rng(seed, spec), seen, what)
        tests.append(test_drawer.split(spec.name, spec.bounds, strings))
    return Task(
        language=language.name, vocab=tuple(language.alphabet),
        train=drawer.split("train", train_bin, [drawn[i] for i in train_rows]),
        val=drawer.split("val", train_bin, [drawn[i] for i in val_rows]),
        tests=tests, seed=seed, train_bin=train_bin, val_fraction=val_fraction,
        negative_rate=negative_rate, distinct=distinct,
        test_bins=[spec.bounds for spec in test_specs])


def as_test_bin(test_bin: BinSpec | Sequence[int] | str) -> BinSpec:
    """A test bin given as a ``BinSpec``, a pair (lo, hi) or its text ``LO:HI[@NAME]``."""
    if isinstance(test_bin, str):
        return parse_test_bin(test_bin)
    if isinstance(test_bin, BinSpec):
        return BinSpec(*check_bin(test_bin.bounds), test_bin.distribution)
    return BinSpec(*check_bin(test_bin))


def by_distribution(task: Task) -> dict[str, Task]:
    """The task as one task per test distribution, each with the same train and validation
    splits and that distribution's test splits (``uniform`` first, always present): a layout
    that names files by bounds alone (the paper's) holds one of them per directory. A test
    bin listed twice is refused here, before anything is written."""
    names = [split.name for split in task.tests]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise CraspError(f"test bin {', '.join(repeated)} listed twice")
    groups: dict[str, list[int]] = {UNIFORM: []}
    for index, split in enumerate(task.tests):
        groups.setdefault(split.distribution, []).append(index)
    return {distribution: replace(task, tests=[task.tests[i] for i in rows],
                                  test_bins=[task.test_bins[i] for i in rows])
            for distribution, rows in groups.items()}


def _check_request(n_train: int, n_test: int, val_fraction: float, seed: int,
                   negative_rate: float) -> None:
    if n_train < 0 or n_test < 0:
        raise CraspError(f"the number of strings must be >= 0 (got {n_train}, {n_test})")
    if not 0 <= val_fraction < 1:
        raise CraspError(f"the validation fraction must be in [0, 1), not {val_fraction:g}")
    if seed < 0:
        raise CraspError(f"the seed must be >= 0, not {seed}")
    if not 0 <= negative_rate <= 1:
        raise CraspError(f"the negative rate must be in [0, 1], not {negative_rate:g}")


def check_size(n_train: int, train_bin: Bin, n_test: int, test_bins: list[Bin]) -> None:
    """Refuse before drawing a dataset that could exceed ``MAX_TOKENS`` (``build_task``, and a
    run's config before anything of the run is written)."""
    asked = n_train * train_bin[1] + n_test * sum(hi for _, hi in test_bins)
    if asked > MAX_TOKENS:
        raise CraspError(f"{n_train:,} training strings of up to {train_bin[1]:,} tokens and "
                         f"{n_test:,} per test bin ({len(test_bins)} bin(s), up to "
                         f"{max((hi for _, hi in test_bins), default=0):,} tokens) can be "
                         f"{asked:,} tokens, more than {MAX_TOKENS:,}; ask for fewer or "
                         "shorter strings")


def _rng(seed: int, role: int, bin_: Bin) -> np.random.Generator:
    return np.random.default_rng([seed, role, *bin_])


def _test_rng(seed: int, test_bin: BinSpec) -> np.random.Generator:
    """The uniform bin's stream as it always was; a named distribution's its own."""
    if test_bin.distribution == UNIFORM:
        return _rng(seed, TEST_ROLE, test_bin.bounds)
    return np.random.default_rng([seed, TEST_ROLE, *test_bin.bounds,
                                  zlib.crc32(test_bin.distribution.encode())])


def _partition(drawn: list[Ids], n_val: int, rng: np.random.Generator, language: Language,
               bin_: Bin) -> tuple[list[int], list[int]]:
    """Rows of the train and validation splits: whole groups of equal strings go to
    validation, in a seeded random order, while they fit in ``n_val``."""
    groups: dict[bytes, list[int]] = {}
    for row, ids in enumerate(drawn):
        groups.setdefault(ids.tobytes(), []).append(row)
    members = list(groups.values())
    val_rows: list[int] = []
    for group in rng.permutation(len(members)):
        if len(val_rows) == n_val:
            break
        if len(val_rows) + len(members[group]) <= n_val:
            val_rows += members[group]
    if n_val > 0 and (not val_rows or len(val_rows) == len(drawn)):
        raise CraspError(
            f"{language.name}: the {len(drawn)} strings drawn from the training bin "
            f"{format_bin(bin_)} are copies of {len(members)} distinct string(s) (up to "
            f"{max(map(len, members))} copies each); no set of whole groups of copies makes a "
            f"validation split of at most {n_val} strings with training strings left over, and "
            "a validation string must not be a training string. Widen the bin, or set the "
            "validation fraction to 0")
    chosen = set(val_rows)
    return [row for row in range(len(drawn)) if row not in chosen], sorted(val_rows)


@dataclass
class _Drawer:
    language: Language
    negative_rate: float
    distinct: bool

    def draw(self, bin_: Bin, n: int, rng: np.random.Generator, exclude: set[bytes],
             what: str) -> list[Ids]:
        language, (lo, hi) = self.language, bin_
        if n == 0:
            return []
        lengths = language.lengths_in(lo, hi)
        if len(lengths) == 0:
            raise CraspError(f"{language.name} has no string with a length in {lo}:{hi} "
                             f"(its strings have {language.lengths_note}); choose another bin")
        if self.negative_rate == 0:
            self._check_available(lengths, n, exclude, bin_, what)
        strings: list[Ids] = []
        seen: set[bytes] = set()
        max_attempts = MAX_ATTEMPTS_PER_STRING * n + ATTEMPTS_SLACK
        attempts = 0
        while attempts < max_attempts:
            # lengths and negative flags for the strings still missing, in one call each
            count = min(n - len(strings), max_attempts - attempts)
            chosen = lengths[rng.integers(len(lengths), size=count)].tolist()
            negative = (rng.random(count) < self.negative_rate).tolist() \
                if self.negative_rate > 0 else [False] * count
            attempts += count
            for length, is_negative in zip(chosen, negative):
                ids = (language.near_miss(length, rng) if is_negative
                       else language.sample_ids(length, rng))
                key = ids.tobytes()
                if key in exclude or (self.distinct and key in seen):
                    continue
                seen.add(key)
                strings.append(ids)
            if len(strings) == n:
                return strings
        raise CraspError(
            f"{language.name}: drew only {len(strings)} of {n} strings for {what} {lo}:{hi} in "
            f"{max_attempts} attempts; the strings still allowed there (not training strings"
            f"{', not repeated' if self.distinct else ''}) are too rare under the "
            "length-uniform distribution. Ask for fewer strings or use a wider or longer bin")

    def _check_available(self, lengths: np.ndarray, n: int, exclude: set[bytes], bin_: Bin,
                         what: str) -> None:
        """Refuse at once a request the bin cannot hold (counts are exact integers).

        Every listed length holds a string, so a bin with as many lengths as the request
        (``n`` beside the excluded strings) holds it uncounted; otherwise the counts are summed
        from the shortest length up and only until they hold it. Exact counts cost time that
        grows with the length (a Catalan number at 10**6 took 6.5 s), and a long bin would pay
        it at every length when one length already holds more strings than any request."""
        lo, hi = bin_
        reaches = self.language.reaches
        excluded = sum(1 for key in exclude if lo <= len(key) <= hi
                       and (reaches is None or reaches(np.frombuffer(key, dtype=np.int8))))
        if len(lengths) >= n + excluded:
            return
        total = 0
        for length in lengths:
            total += self.language.support_size(int(length))
            if total >= n + excluded:
                return
        available = total - excluded
        outside = " outside the training split" if excluded else ""
        if self.distinct and available < n:
            raise CraspError(
                f"{self.language.name}: {what} {lo}:{hi} holds only {available} distinct "
                f"strings{outside}, fewer than the {n} distinct strings asked for; ask for at "
                f"most {available}, widen the bin, or allow duplicates (they are then counted "
                "and reported)")
        if available == 0:
            raise CraspError(
                f"{self.language.name}: every one of the {total} strings with a length in "
                f"{lo}:{hi} was drawn for training, and a test string must not be a training "
                "string; use a test bin with longer strings, or fewer training strings")

    def split(self, name: str, bin_: Bin, strings: list[Ids]) -> Split:
        distinct_count = len({ids.tobytes() for ids in strings})
        return Split(name=name, lo=bin_[0], hi=bin_[1],
                     strings=[self.language.decode(ids) for ids in strings],
                     labels=self.language.labels_of(strings),
                     duplicates=len(strings) - distinct_count)
