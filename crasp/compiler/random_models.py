"""Random small models in the crasp format: integer weights, a small precision, softmax
attention that is not uniform. They are the other half of the decompiler's test set (models
that no program compiled to), shared by ``tests/test_decompile.py`` and
``benchmarks/bench_decompile.py``.
"""

from __future__ import annotations

import numpy as np

from crasp.compiler.model_config import (FORMAT, POSITIONAL_VERSION, VERSION, ModelConfig,
                                         attention, expected_shapes, periodic)
from crasp.compiler.model_config import alibi as alibi_slopes
from crasp.compiler.model_format import CompiledModel


def random_model(seed: int, vocab: tuple[str, ...] = ("a", "b"), max_layers: int = 3,
                 max_d_model: int = 6, max_weight: int = 1,
                 moduli: tuple[int, ...] = (), alibi: bool = False) -> CompiledModel:
    """1..max_layers layers, d_model 2..max_d_model, one or two heads whose outputs have
    together at most two coordinates, hidden widths 1..3, p in 3..4 total bits and s in 0..1
    fractional bits, every weight an integer in [-max_weight, max_weight] (q and k are zero
    with probability 1/3, which makes the head uniform). With ``moduli``, a version-3 model
    with a periodic table of random integer rows per modulus (drawn last, so the rest of the
    model is the one the seed gives without them); with ``alibi``, per-head ALiBi slopes in
    {0, 1/2, 1, 2} (version 3 as well)."""
    rng = np.random.default_rng(seed)
    n_layers = int(rng.integers(1, max_layers + 1))
    n_heads = int(rng.integers(1, 3))
    total_bits = int(rng.integers(3, 5))
    config = {
        "format": FORMAT, "version": VERSION, "vocab": list(vocab), "bos_id": len(vocab),
        "d_model": int(rng.integers(2, max_d_model + 1)), "n_layers": n_layers,
        "n_heads": n_heads, "d_head": 1 if n_heads == 2 else int(rng.integers(1, 3)),
        "ffn_widths": [[int(rng.integers(1, 4))] for _ in range(n_layers)],
        "precision": {"total_bits": total_bits, "frac_bits": int(rng.integers(0, 2))},
        "depth": n_layers, "program_sha256": "", "other_id": len(vocab) + 1,
    }
    config["residual_labels"] = [f"x{j}" for j in range(config["d_model"])]
    tensors = {name: rng.integers(-max_weight, max_weight + 1, shape).astype(np.float64)
               for name, shape in expected_shapes(ModelConfig.from_json(config, "random")).items()}
    for layer in range(n_layers):
        if rng.random() < 1 / 3:
            tensors[attention(layer, "q")][:] = 0
    if moduli or alibi:
        config.update(version=POSITIONAL_VERSION, periodic_moduli=list(moduli), alibi=alibi)
    for modulus in moduli:
        tensors[periodic(modulus)] = rng.integers(
            -max_weight, max_weight + 1, (modulus, config["d_model"])).astype(np.float64)
    for layer in range(n_layers if alibi else 0):
        tensors[alibi_slopes(layer)] = rng.choice([0.0, 0.5, 1.0, 2.0], n_heads)
    return CompiledModel(config, tensors)
