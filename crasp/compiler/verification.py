"""Pass: (Program, CompiledModel) -> VerificationResult. The model against the interpreter.

Every string up to a length N over the alphabet, and random strings up to a length M (the
first of them exactly M long), are run through the exact executor and the interpreter; the
decisions must agree at every position, BOS included (the empty string's answer). The first
disagreement is reported with its input, position and both answers.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from crasp import syntax
from crasp.compiler.compiling import compile_program
from crasp.compiler.executor import execute
from crasp.compiler.model_format import CompiledModel
from crasp.errors import CraspError
from crasp.interpret import evaluate
from crasp.util import counting
from crasp.util.progress import progress_bar

MAX_EXHAUSTIVE_STRINGS = 2_000_000
MAX_RANDOM_TOKENS = 200_000_000
"""The most tokens of random strings one verification runs (64 strings of 2,000 by default)."""
BATCH_POSITIONS = 1 << 18


@dataclass(frozen=True)
class VerificationResult:
    ok: bool
    checked_strings: int
    counterexample: list[str] | None = None
    position: int | None = None   # 0-based token position; -1 is BOS (the empty input)
    expected: bool | None = None  # the interpreter's answer there
    got: bool | None = None       # the compiled model's
    layers: int = 0
    exhaustive_length: int = 0
    random_strings: int = 0
    random_length: int = 0
    saturations: int = 0          # roundings that saturated in the exact model (0 if exact)

    def describe(self) -> str:
        if self.ok:
            random = (f" and {self.random_strings} random strings of length up to "
                      f"{self.random_length}" if self.random_strings else "")
            saturated = (f" (but {self.saturations} roundings saturated)"
                         if self.saturations else "")
            return (f"the compiled model ({self.layers} layers) agrees with the interpreter at "
                    f"every position of {self.checked_strings} strings: all strings up to length "
                    f"{self.exhaustive_length}{random}{saturated}")
        tokens = self.counterexample or []
        joined = ("" if all(len(t) == 1 for t in tokens) else " ").join(tokens)
        where = "at BOS" if self.position == -1 else f"at position {self.position}"
        return (f"on the input {joined!r} ({len(tokens)} tokens) {where}, the interpreter "
                f"answers {self.expected} but the compiled model answers {self.got}")


def _exhaustive(alphabet: tuple[str, ...], max_length: int) -> Iterator[list[str]]:
    for length in range(max_length + 1):
        for word in itertools.product(alphabet, repeat=length):
            yield list(word)


def _random(alphabet: tuple[str, ...], max_length: int, count: int, seed: int
            ) -> Iterator[list[str]]:
    if not alphabet:
        return
    rng = np.random.default_rng(seed)
    symbols = np.array(alphabet, dtype=object)
    for index in range(count):
        length = max_length if index == 0 else int(rng.integers(1, max_length + 1))
        yield list(symbols[rng.integers(0, len(alphabet), length)])


def _batches(strings: Iterator[list[str]]) -> Iterator[list[list[str]]]:
    """Consecutive strings, as many per batch as fit BATCH_POSITIONS padded positions."""
    batch: list[list[str]] = []
    longest = 0
    for tokens in strings:
        if batch and (len(batch) + 1) * (max(longest, len(tokens)) + 1) > BATCH_POSITIONS:
            yield batch
            batch, longest = [], 0
        batch.append(tokens)
        longest = max(longest, len(tokens))
    if batch:
        yield batch


def verify(program: syntax.Program, max_exhaustive_length: int = 8,
           max_random_length: int = 2000, n_random: int = 64, seed: int = 0,
           model: CompiledModel | None = None, progress: bool = False) -> VerificationResult:
    """Compile ``program`` (or take ``model``) and compare it with the interpreter on every
    string up to ``max_exhaustive_length`` and ``n_random`` random ones; ``progress`` counts
    the strings on stderr (10,000 random strings of up to 2,000 tokens take 3 minutes).

    >>> import crasp
    >>> verify(crasp.load_program(crasp.example("dyck1")), max_exhaustive_length=4,
    ...        n_random=4, max_random_length=20).ok
    True
    """
    if model is None:
        model = compile_program(program)
    alphabet = tuple(program.alphabet)
    if tuple(model.config["vocab"]) != alphabet:
        raise CraspError(f"the model's vocabulary {model.config['vocab']} is not the program's "
                         f"alphabet {list(alphabet)}")
    total = counting.strings_up_to(len(alphabet), max_exhaustive_length)
    if total > MAX_EXHAUSTIVE_STRINGS:
        many = f"{total:,}" if total < counting.BEYOND_ANY_LIMIT else "more than 2^63"
        raise CraspError(f"all strings up to length {max_exhaustive_length} over "
                         f"{len(alphabet)} tokens are {many} strings, more than "
                         f"{MAX_EXHAUSTIVE_STRINGS:,}; choose a smaller maximum length")
    if n_random * max_random_length > MAX_RANDOM_TOKENS:
        raise CraspError(f"{n_random:,} random strings of up to {max_random_length:,} tokens "
                         f"are more than {MAX_RANDOM_TOKENS:,} tokens; choose fewer or shorter")
    strings = itertools.chain(_exhaustive(alphabet, max_exhaustive_length),
                              _random(alphabet, max_random_length, n_random, seed))
    checked = saturations = 0
    with progress_bar(total=total + (n_random if alphabet else 0), desc="verified",
                      unit="string", disable=not progress) as bar:
        for batch in _batches(strings):
            got = execute(model, batch)
            expected = evaluate(program, batch)
            saturations += got.saturations
            # column 0 is BOS: compare it through the answers (accept) of the empty inputs
            wrong = (got.output != expected.output).any(axis=1) | (got.accept != expected.accept)
            if wrong.any():
                row = int(np.argmax(wrong))
                tokens = batch[row]
                differs = got.output[row] != expected.output[row]
                position = int(np.argmax(differs)) if differs.any() else -1
                if position < 0:  # the empty input: its answer at BOS
                    answers = bool(expected.accept[row]), bool(got.accept[row])
                else:
                    answers = (bool(expected.output[row, position]),
                               bool(got.output[row, position]))
                return VerificationResult(
                    False, checked + row + 1, tokens, position, *answers, model.n_layers,
                    max_exhaustive_length, n_random, max_random_length, saturations)
            checked += len(batch)
            bar.update(len(batch))
    return VerificationResult(True, checked, layers=model.n_layers,
                              exhaustive_length=max_exhaustive_length, random_strings=n_random,
                              random_length=max_random_length, saturations=saturations)
