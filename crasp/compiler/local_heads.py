"""Local counts -> ALiBi heads: the head that reads ``#[offset(c)] P`` at every position.

A local count L = ``#[offset(c)] P`` holds at the 0-based token position i iff i - c >= 0 and
P holds at i - c. In transformer positions (BOS t = 0, token i at t = i + 1) that is: the key
position j = t - c must be a token (j >= 1). One head computes every local count of a layer
with the same offset c, one value dimension each.

**Residues.** Let M = M_loc be the local period (largest offset of the program + 1, so
M > c) and rho(t) = t mod M, available as a one-hot from the periodic table of M rows
(``readouts.periodic_tables``: its row t marks the program residue (t - 1) mod M, i.e. the
coordinate of residue r is 1 iff t = r + 1 mod M).

**Scores.** The head has width >= M; for r = 0 .. M - 1:

    q_t[r] = [t mod M = r]
    k_j[r] = c if r = (j + c) mod M else -1          (a token at j)
    k_BOS[r] = min(r, c)                             (BOS, j = 0)

so q_t . k_j = c if t - j = c (mod M) else -1 (a circulant function of the residues: what
rotary attention at the angles 2 pi k / M computes), and q_t . k_BOS = min(t mod M, c). The
head's ALiBi slope is a = 1, so its score is q_t . k_j - (t - j), and its weight is
R(exp(score)) = floor(exp(score)) (s = 0): 1 for a score of 0, and 0 for a negative score
(exp(x) < 1). Then, for t - j = d >= 0:

* a token j with d = c: score c - c = 0, weight 1;
* a token j with d = c + kM, k >= 1: score c - c - kM < 0, weight 0 (the window lemma: with
  slope 1 and scores at most c, nothing beyond distance c is seen);
* any other token j: score -1 - d < 0, weight 0;
* BOS: if t <= c then t mod M = t (t <= c < M) and the score is t - t = 0, weight 1; if
  t > c, the score is min(t mod M, c) - t <= c - t < 0, weight 0.

A token j with d = c exists exactly when t - c >= 1, and then BOS has weight 0; when t <= c,
BOS alone has weight 1 (no token j in [1, t] has t - j = c mod M, since 0 <= t - j < c < M
or t - j = c would put j at 0). So at every t exactly one position has weight 1, D = 1, and
the head's output is exactly v at that position: v_{t-c} for t - c >= 1, else v_BOS.

**Values.** v = readout(P) - P(BOS) e_BOS: P's 0/1 value at a token, and 0 at BOS (a
position before the first token never counts, as in the interpreter). So the output is
exactly L(i), 0 or 1, at every position and every length; the output projection adds it
to L's coordinate (0 before: ``allocate``), where the layer's feed-forward sublayer and later
layers read it.

**Precision.** Every score is an integer and every weight is 0 or 1, every value and output
0 or 1: the head adds nothing to the bits p needs. The key and query weights are integers in
[-1, c]. Preconditions: s = 0, and c < M.
"""

from __future__ import annotations

import numpy as np

from crasp.compiler.affine import Affine, matrix
from crasp.compiler.allocate import Layout
from crasp.compiler.circuit import Local
from crasp.compiler.readouts import Readouts

SLOPE = 1.0
"""The ALiBi slope of every local head (uniform heads have slope 0)."""


def local_head_width(layout: Layout, locals_by_offset: dict[int, list[int]]) -> int:
    """The head width a layer's local heads need: M query/key dimensions, one value
    dimension per local count of the offset."""
    if not locals_by_offset:
        return 0
    return max(layout.encodings.local_period, *map(len, locals_by_offset.values()))


def local_head(offset: int, nodes: list[int], read: Readouts, d_head: int
               ) -> dict[str, np.ndarray]:
    """q, k, v [d_head, d_model] and o [d_model, d_head] of the head for the local counts
    ``nodes`` (all with this offset)."""
    layout = read.layout
    period = layout.encodings.local_period
    residue = layout.residues[period]         # coordinate of program residue r = (t - 1) mod M
    at_t = {r: residue[(r - 1) % period] for r in range(period)}  # coordinate of t mod M = r
    queries = {r: Affine({at_t[r]: 1}) for r in range(period)}
    keys = {}
    for r in range(period):
        row = {at_t[t]: (offset if r == (t + offset) % period else -1) for t in range(period)}
        at_bos = at_t[0]   # BOS is t = 0: its residue coordinate, plus the BOS flag
        row[layout.bos] = min(r, offset) - row[at_bos]
        keys[r] = Affine({i: v for i, v in row.items() if v})
    values = {}
    for k, ident in enumerate(nodes):
        node = read.circuit.nodes[ident]
        assert isinstance(node, Local) and node.offset == offset
        values[k] = read(node.body) + Affine({layout.bos: -int(read.bos_values[node.body])})
    d = layout.d_model
    tensors = {part: matrix(rows, (d_head, d))[0]
               for part, rows in (("q", queries), ("k", keys), ("v", values))}
    tensors["o"] = np.zeros((d, d_head))
    for k, ident in enumerate(nodes):
        tensors["o"][layout.bits[ident], k] = 1
    return tensors
