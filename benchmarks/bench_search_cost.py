"""What one epoch of each searched configuration costs: the paper's grid against crasp's.

    python benchmarks/bench_search_cost.py [--steps 4] [--depths 3,6]

Times training steps of crasp's model (``build_model``, AdamW, gradient clipping as the preset
has it) on strings of length 226 (the middle of the train bin 201-250), in CPU time of this one
thread (``time.process_time``), so that other jobs on the machine slow the wall clock and not
the measurement. For each depth it measures

  * the paper's configurations (preset ``knee-deep``: batch 1, post-LN, one head, FF 2048,
    dropout 0.1) at d_model 256 and 512: one epoch = 800 steps of one string;
  * the closest affordable search's (preset ``one-head``, and ``default``'s four heads: batch
    32, pre-LN, FF 256) at d_model 64 and 256: one epoch = 50 steps of 32 strings (1,600);

and prints the CPU seconds of one epoch's training (validation excluded) and its ratio to the
baseline, the ``one-head`` preset at d_model 64 (the second edition's cells), measured in the
same invocation. docs/experiments.md ("The paper's protocol") records a run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crasp.train import resolve_preset  # noqa: E402
from crasp.train.optimization import make_optimizer  # noqa: E402
from crasp.train.model import build_model  # noqa: E402

LENGTH = 226
VOCAB = 3
# (label, preset, d_model, strings per step, steps per epoch)
CONFIGS = [
    ("one-head d64 batch 32 (baseline)", "one-head", 64, 32, 50),
    ("one-head d256 batch 32", "one-head", 256, 32, 50),
    ("default (4 heads) d256 batch 32", "default", 256, 32, 50),
    ("knee-deep d256 batch 1 (paper)", "knee-deep", 256, 1, 800),
    ("knee-deep d512 batch 1 (paper)", "knee-deep", 512, 1, 800),
]


def step_seconds(preset: str, d_model: int, depth: int, batch: int, steps: int) -> float:
    """Median CPU seconds of one training step (after one warm-up step)."""
    config = resolve_preset(preset, language="L6", depth=depth, d_model=d_model, lr=1e-4,
                            search=None)
    torch.manual_seed(0)
    model = build_model(config, VOCAB)
    model.train()
    optimizer = make_optimizer(model, config)
    tokens = torch.randint(0, 2, (batch, LENGTH))
    labels = torch.randint(0, 2, (batch, LENGTH)).float()
    times = []
    for step in range(steps + 1):
        start = time.process_time()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(tokens), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if config.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        if step:
            times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--depths", default="3,6")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for depth in (int(d) for d in args.depths.split(",")):
        baseline = None
        for label, preset, d_model, batch, steps_per_epoch in CONFIGS:
            epoch = step_seconds(preset, d_model, depth, batch, args.steps) * steps_per_epoch
            baseline = baseline or epoch
            print(f"depth {depth}  {label:34s} {epoch:8.1f} CPU s per epoch "
                  f"(training)  {epoch / baseline:6.1f}x baseline")


if __name__ == "__main__":
    main()
