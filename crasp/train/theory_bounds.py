"""Where a theorem bounds the depth a transformer needs for a language's prediction task.

A report draws a theory line, and checks cells against it, only where a statement below gives
one; everywhere else it says that no bound is known. The statements (theory.md §§5–7):

* NoPE, L_k (k ≥ 1): depth exactly k − 2 for k ≥ 3 and 0 for k ≤ 2 — lower bound
  cor:prediction_task_depth (Knee-Deep), upper bound by the program B_{k−2} ∧ Q_{σ_k}
  (``crasp.languages.blocks.blocks_prediction_depth``).
* NoPE, E_k: a proved lower bound k − 2 (the prediction task of L_k reduces to that of E_k, see
  ``crasp.languages.blocks.neutral_prediction_depth``) and an upper bound k − 1 by the program
  ``E{k}_predict``; for k ≤ 3 the two meet (proved exact), for k ≥ 4 the exact value k − 1 is a
  conjecture. Cells below the lower bound that succeed contradict a theorem; cells at or above
  the upper bound that fail are training failures, not contradictions.
* NoPE with ``dp-free`` attention or a ``qk_rank``: the same bounds as NoPE. Both restrict the
  weights of a NoPE softmax transformer (``dp-free`` is ``W_Q = W_K = 0``; ``qk_rank`` bounds the
  rank of ``W_Q W_K^T``), so the lower bound, which holds for every choice of weights, still
  holds; and the constructions behind the upper bounds attend only by uniform averaging, which
  is exactly what ``dp-free`` NoPE attention computes (and what any rank reaches with ``W_Q =
  0``). ``hardmax`` attention is another model (average-hard attention), for which none of
  these theorems is stated, so it gets no bound.
* RoPE, ALiBi and the other encodings: no prediction-task bound is proved for L_k (a local head
  brings L_k to depth 1 in theory, theory.md §7) or for E_k (the E_k theorems under positional
  encodings are about recognition), so none is drawn.

Preconditions: the depths are those of the fixed-precision model of the paper, which the trained
float models approximate; "succeeds" is an empirical criterion (the report's threshold), so a
listed contradiction is a fact about trained models to be explained, not a disproof.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class DepthBound:
    """``lower`` ≤ the needed depth ≤ ``upper`` (both proved); ``exact`` when they meet."""

    lower: int
    upper: int
    statement: str

    @property
    def exact(self) -> bool:
        return self.lower == self.upper


def bounded_architecture(architecture: str) -> bool:
    """Whether the statements above speak about ``architecture`` (a posenc, or a label of
    ``crasp.train.config.architecture_label``): NoPE, with softmax or dp-free attention."""
    posenc, *modifiers = architecture.split("+")
    return posenc == "nope" and "hardmax" not in modifiers


def depth_bound(language: str, architecture: str) -> DepthBound | None:
    """The proved bound for the prediction task of ``language`` under ``architecture`` (a
    positional encoding, or an ``architecture_label``), if any."""
    if not bounded_architecture(architecture):
        return None
    match = re.fullmatch(r"([LE])(\d+)", language)
    if not match:
        return None
    family, k = match.group(1), int(match.group(2))
    if k < 1:
        return None
    if family == "L":
        depth = max(k - 2, 0)
        return DepthBound(depth, depth, "L_k prediction needs depth exactly k − 2 "
                                        "(cor:prediction_task_depth; proved)")
    upper = 1 if k == 1 else k - 1
    lower = 1 if k <= 2 else k - 2  # for k <= 2 a depth-0 formula cannot see past an e
    if k == 3:
        lower = upper  # the depth-1 counterexample in neutral_prediction_depth
    if lower == upper:
        return DepthBound(lower, upper, f"E_{k} prediction needs depth exactly {upper} (proved)")
    return DepthBound(lower, upper, f"E_{k} prediction: depth ≥ {lower} proved, ≤ {upper} by "
                                    f"construction; exactly {upper} is conjectured")
