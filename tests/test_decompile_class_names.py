"""crasp.decompile.class_names against the plain construction it replaced: every literal's and
every pair's column over all states, compared with the class (which cost labels^2 x states
booleans per class), on random states, labels and classes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.decompile import class_names
from crasp.decompile.class_names import ClassNamer, identifier

LABELS = st.lists(st.sampled_from(["x", "y", "x", "count a", "h[3]", "7up", "", "q:1", "b_c"]),
                  min_size=1, max_size=8)


def plain_candidates(states: np.ndarray, labels: list[str], members: np.ndarray) -> list[str]:
    literals = [(f"{prefix}{base}", column) for j, label in enumerate(labels)
                if (base := identifier(label))
                for prefix, column in (("", states[:, j] != 0), ("not_", states[:, j] == 0))]
    pairs = [(f"{a}_{b}", first & second) for i, (a, first) in enumerate(literals)
             for b, second in literals[i + 1:]]
    return [name for name, column in literals + sorted(pairs, key=lambda pair: len(pair[0]))
            if np.array_equal(column, members)]


@settings(max_examples=200, deadline=None)
@given(LABELS, st.integers(1, 40), st.integers(0, 2**32 - 1), st.integers(0, 3))
def test_the_names_are_the_plain_constructions_in_its_order(labels, n_states, seed, kind):
    """For classes that are a literal's states, a pair's, or random: the same names in the same
    order (the writer takes the first one not taken)."""
    generator = np.random.default_rng(seed)
    states = generator.integers(-1, 2, (n_states, len(labels))) * generator.integers(
        0, 2, (n_states, len(labels)))
    j, k = generator.integers(0, len(labels), 2)
    members = [states[:, j] != 0, (states[:, j] != 0) & (states[:, k] == 0),
               generator.integers(0, 2, n_states).astype(bool),
               np.ones(n_states, dtype=bool)][kind]
    namer = ClassNamer([states], labels)
    assert list(namer.candidates(0, members)) == plain_candidates(states, labels, members)


def test_the_pairs_stay_within_their_work_per_level():
    """A wide level (64 labels, 20,000 states, 300 classes): the pairs' checks never pass
    ``PAIR_WORK``, and the single literals still name the classes that are one."""
    generator = np.random.default_rng(0)
    states = generator.integers(0, 2, (20_000, 64))
    namer = ClassNamer([states], [f"c{j}" for j in range(64)])
    classes = generator.integers(0, 300, 20_000)
    for number in range(300):
        list(namer.candidates(0, classes == number))
    assert 0 < namer.pair_work.get(0, 1) <= class_names.PAIR_WORK
    assert next(namer.candidates(0, states[:, 5] != 0)) == "c5"
