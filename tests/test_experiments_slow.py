"""Slow experiments, not run in CI (``pytest -m slow``): the depth boundary on L4 with the
default preset on CPU, the cell of the paper's figure that is cheapest to check."""

from __future__ import annotations

import pytest

from crasp.train import resolve_preset
from crasp.train.loop import train

pytestmark = pytest.mark.slow


def long_bin_exact_match(depth: int, run_dir) -> float:
    config = resolve_preset("default", language="L4", depth=depth, posenc="nope", seed=0,
                            device="cpu")
    results = train(config, run_dir, progress=False, resume=False)
    return results["bins"]["351:400"]["exact_match"]


def test_L4_needs_depth_two_without_positional_encoding(tmp_path):
    """Knee-Deep: L4 prediction needs depth 2 (published: 21.7% at depth 1, then 100%)."""
    assert long_bin_exact_match(2, tmp_path / "d2") >= 0.99
    assert long_bin_exact_match(1, tmp_path / "d1") <= 0.6
