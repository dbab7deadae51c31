"""Pass: StateMachine -> StateClasses. Merge the states that no later computation tells apart.

Backwards from the output: the states of the last level are told apart only by their
decision, so they fall into (at most) two classes. A state u of level l - 1 plays three roles
in layer l: as a query (its rows W(u, .), S(u, .) and its box), as a key (its columns
W(., u), S(., u) and value v_u), and as the input of the feed-forward table (the classes, at
level l, of the states it leads to). Two states equal in all three roles are interchangeable:
every count vector gives the same averages once their counts are added, so every later class
and the answer are the same. Each class becomes one Boolean definition of the program, so
this is the "merge definitions that are equal as functions of their inputs" of the output,
done on the states before any formula exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crasp.decompile.enumerate_states import StateMachine


@dataclass
class StateClasses:
    """``of[l][u]``: the class of state u of level l (numbered 0, 1, ...; at the last level
    the class is the decision, 1 = accept); ``count[l]`` the number of classes."""

    of: list[np.ndarray]
    count: list[int]


def _number(signatures: list[bytes]) -> np.ndarray:
    ids: dict[bytes, int] = {}
    return np.array([ids.setdefault(s, len(ids)) for s in signatures], np.int64)


def classify(machine: StateMachine) -> StateClasses:
    of = [np.asarray(machine.decisions, np.int64)]
    for tables in reversed(machine.layers):
        after = of[0]
        signatures = []
        for u, transition in enumerate(tables.transitions):
            signatures.append(b"|".join((
                tables.weights[:, u].tobytes(), tables.summands[:, u].tobytes(),
                tables.boxes[u].tobytes(),
                tables.weights[:, :, u].tobytes(), tables.summands[:, :, u].tobytes(),
                tables.values[:, u].tobytes(), after[transition].tobytes(),
                *(b"%d" % head + window.weights[u].tobytes() + window.summands[u].tobytes()
                  + window.weights[:, u].tobytes() + window.summands[:, u].tobytes()
                  for head, window in sorted(tables.windows.items())))))
        of.insert(0, _number(signatures))
    return StateClasses(of, [len(np.unique(level)) for level in of])
