"""A C-RASP program as a language: labels from the interpreter, strings from elsewhere.

The strings come from a named language's generator (``prog.crasp@dyck1``: Dyck words labelled
by the program; its test distributions come along, so ``prog.crasp@L5`` takes ``@skewed``)
or, by default, uniformly at random over the program's alphabet. Uniform strings are not
filtered to the program's positives: those can be arbitrarily rare (a random
string of length 200 is a Dyck word with probability about 10^-3 ... 10^-60), so the
program's labels say which prefixes are accepted instead.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from crasp.errors import CraspError
from crasp.languages.language import (MAX_ALPHABET, Ids, Language, Lengths, ReferenceProgram,
                                      StringDistribution)
from crasp.util.counting import strings_of_length

LABEL_BATCH = 4096
"""Strings per interpreter call when labelling a split (bounds the [B, T] arrays)."""


def program_language(spec: str, strings_from: Language | None,
                     dialect: str = "crasp") -> Language:
    """The language of the program at ``spec`` (a path; the name keeps any ``@source``), read
    in ``dialect``."""
    import crasp

    path = Path(spec.split("@", 1)[0])
    program = crasp.load_program(path, dialect=dialect)
    alphabet = tuple(program.alphabet)
    if len(alphabet) > MAX_ALPHABET:
        raise CraspError(f"{path}: its alphabet has {len(alphabet):,} tokens; a language's "
                         f"strings (datasets, training) can have at most {MAX_ALPHABET}")
    index = {token: i for i, token in enumerate(alphabet)}
    tokens = np.array(alphabet, dtype=object)
    depth = crasp.depth_of(program)

    def answers(strings: list[Ids]) -> list[np.ndarray]:
        labels = []
        for start in range(0, len(strings), LABEL_BATCH):
            chunk = strings[start:start + LABEL_BATCH]
            output = crasp.evaluate(program, [tokens[ids].tolist() for ids in chunk]).output
            labels += [output[row, :len(ids)].copy() for row, ids in enumerate(chunk)]
        return labels

    def oracle(word) -> bool:
        return bool(crasp.evaluate(program, [list(word)]).accept[0])

    if strings_from is None:
        def support_size(n: int) -> int:   # capped: a request is compared with it, never more
            return strings_of_length(len(alphabet), n)

        def sample_ids(n: int, rng: np.random.Generator) -> Ids:
            return rng.integers(0, len(alphabet), size=n, dtype=np.int8)

        lengths, origin = Lengths(), "uniformly random strings over the alphabet"
        distributions = {}
    else:
        missing = [t for t in strings_from.alphabet if t not in index]
        if missing:
            raise CraspError(f"{spec}: the strings of {strings_from.name} use "
                             f"{', '.join(map(repr, missing))}, which the program's alphabet "
                             f"{{{', '.join(alphabet)}}} lacks")
        remap = np.array([index[t] for t in strings_from.alphabet], dtype=np.int8)
        support_size = strings_from.support_size
        lengths = strings_from.lengths

        def sample_ids(n: int, rng: np.random.Generator) -> Ids:
            return remap[strings_from.sample_ids(n, rng)]

        distributions = {name: _in_program_ids(distribution, remap)
                         for name, distribution in strings_from.distributions.items()}
        origin = f"strings from {strings_from.name}'s generator"
    reference = ReferenceProgram(path)
    return Language(
        name=spec, alphabet=alphabet, description=f"the language of {path}",
        support_size=support_size, sample_ids=sample_ids, oracle=oracle,
        labeller=lambda ids: answers([ids])[0], batch_labeller=answers,
        lengths=lengths, expressible=True, recognition_depth=depth,
        prediction_depth=depth, program=reference, prediction_program=reference,
        distributions=distributions,
        note=f"labels from the interpreter; {origin}; the depths are the program's (upper "
             "bounds for the language)")


def _in_program_ids(distribution: StringDistribution, remap: np.ndarray) -> StringDistribution:
    """A test distribution of the string source, speaking the program's token ids (``remap``:
    source id -> program id)."""
    back = np.zeros(int(remap.max()) + 1, dtype=np.int8)
    back[remap] = np.arange(len(remap), dtype=np.int8)
    return StringDistribution(
        distribution.name, distribution.definition, distribution.support_size,
        lambda n, rng: remap[distribution.sample_ids(n, rng)],
        lambda ids: distribution.reaches(back[ids]))
