"""Layout -> the input tables (embedding, periodic tables) and linear readouts of circuit nodes.

The model's input at transformer position t (BOS is t = 0, the i-th token, 0-based, is
t = i + 1) is ``h_t = R(embed[id_t] + sum over the moduli M of pos_M[t mod M])``
(``docs/model-format.md``, version 3). The compiled model runs at s = 0, so R is a floor.

* ``embedding``: row sigma (a token) is e_sigma; row |alphabet| (BOS) is e_BOS; the last row
  (a token outside the alphabet) is e_other; plus 1/2 in each mixed coordinate of sigma.
* ``periodic_tables``: row t of the table of M rows is the one-hot residue of the program
  position i = t - 1 modulo M (so BOS, i = -1, gets residue M - 1, Python's modulo, as the
  interpreter reads ``mod`` at BOS), plus 1/2 in each mixed coordinate (sigma, S) with
  (t - 1) mod M in S.

**Mixed coordinates are exact conjunctions.** The coordinate of (sigma, S) receives 1/2 from
the embedding when the token is sigma and 1/2 from the periodic table when the residue is in
S, so before rounding it is 1, 1/2 or 0, and R(x) = floor(x) makes it exactly
[token = sigma and residue in S]. At BOS the embedding contributes nothing (BOS is no token),
so it is 0 there. Precondition: s = 0 (``precision`` always chooses it).

Every other coordinate starts at 0: the exported bits and the scratch slots are written later,
each by exactly one sublayer.
"""

from __future__ import annotations

import numpy as np

from crasp.compiler.affine import Affine, unit
from crasp.compiler.allocate import OTHER_TOKEN, Layout, mixed_conjunctions
from crasp.compiler.circuit import Not
from crasp.compiler.schedule import Schedule

HALF = 0.5


def embedding(layout: Layout) -> np.ndarray:
    table = np.zeros((len(layout.tokens) + 2, layout.d_model))
    for index in layout.tokens.values():
        table[index, index] = 1
    table[len(layout.tokens), layout.bos] = 1
    table[len(layout.tokens) + 1, layout.other] = 1
    for (token, _), coordinate in layout.mixed.items():
        row = len(layout.tokens) + 1 if token == OTHER_TOKEN else layout.tokens[token]
        table[row, coordinate] = HALF
    return table


def periodic_tables(layout: Layout) -> dict[int, np.ndarray]:
    """The table of each modulus, by modulus (the mixed coordinates live in the table of the
    periodic predicates' period)."""
    tables = {}
    for modulus, coordinates in layout.residues.items():
        table = np.zeros((modulus, layout.d_model))
        for t in range(modulus):
            residue = (t - 1) % modulus
            table[t, coordinates[residue]] = 1
            if modulus == layout.encodings.period:
                for (_, where), coordinate in layout.mixed.items():
                    if residue in where:
                        table[t, coordinate] = HALF
        tables[modulus] = table
    return tables


class Readouts:
    """Linear readouts of circuit nodes from the residual stream (no bias needed).

    * A depth-0 node that depends on the token only is a function f of the token: its readout
      is ``sum_sigma f(sigma) e_sigma + f(BOS) e_BOS + f(other) e_other``, a lookup table on
      the one-hot coordinates (this is how "depth-0 Booleans go straight into the embedding");
      f(other) is f where every token test is false.
    * One that depends on the position only, holding at the residues S: ``sum_{r in S} e_r``
      over the residue coordinates, plus (f(BOS) - [M - 1 in S]) e_BOS, which corrects BOS
      (residue M - 1) should the two differ.
    * One that depends on both: per token sigma, e_sigma if it holds at every residue, the
      mixed coordinate of (sigma, S) if at the residues S only, nothing if at none; plus
      f(BOS) e_BOS (every mixed coordinate is 0 at BOS).
    * An exported node x (and a local count) reads ``e_x`` once its layer has run.
    * ``!x`` for x of depth >= 1 reads ``ONE - readout(x)``.

    Precondition: the node has depth 0 (and a pattern: ``allocate`` records one for every
    needed depth-0 node), or it is (the negation of) an exported node whose layer has already
    run.
    """

    def __init__(self, plan: Schedule, layout: Layout):
        circuit = plan.linearized.circuit
        self.circuit, self.layout = circuit, layout
        self.bos_values = circuit.values_at_bos()

    def __call__(self, ident: int) -> Affine:
        circuit, layout = self.circuit, self.layout
        if circuit.depth[ident] == 0:
            return self.depth0(ident)
        node = circuit.nodes[ident]
        if isinstance(node, Not):
            return Affine({i: 1 for i in layout.one}) - self(node.operand)
        return unit(layout.bits[ident])

    def depth0(self, ident: int) -> Affine:
        layout = self.layout
        pattern = layout.patterns[ident]
        period = layout.encodings.period
        sets = set(pattern.on_token.values())
        full = frozenset(range(max(period, 1)))
        table: dict[int, int] = {layout.bos: int(pattern.bos)}
        if len(sets) == 1 and sets.isdisjoint({full, frozenset()}):
            where = sets.pop()
            for residue in where:
                table[layout.residues[period][residue]] = 1
            table[layout.bos] -= int(period - 1 in where)
        else:
            conjunctions = mixed_conjunctions(pattern, period)
            for token, where in pattern.on_token.items():
                if where == full:
                    table[layout.token_coordinate(token)] = 1
                elif (token, where) in conjunctions:
                    table[layout.mixed[token, where]] = 1
        return Affine({i: v for i, v in table.items() if v})
