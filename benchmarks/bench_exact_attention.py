"""The format's exact arithmetic against the float forward pass, on a run of the paper grid's
size (``crasp extract``'s precision choice and fidelity, ``crasp eval`` of a ``--precision``
run, and ``crasp train --precision`` all read every string this way).

A randomly initialized trainer model (NoPE, d_model 256, one head, d_ff 2048, depth 3: the
third edition's L6 d3 cell) reads a batch of random strings, in float64 (the baseline, as
``crasp extract`` reads its reference) and read at precision 8.4 (``QuantizedRun``, whose
heads are ``crasp.train.fixed_precision.fixed_attention``). Prints the seconds per string of
each and their ratio; the two timings take turns (``timing.best_of_each``) and count this
process's processor time only, so the sweeps sharing the machine change them little.

    python benchmarks/bench_exact_attention.py [--length 250] [--strings 16] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from crasp.train.config import TrainConfig  # noqa: E402
from crasp.train.model import build_model  # noqa: E402
from crasp.train.quantize import QuantizedRun  # noqa: E402
from timing import best_of_each  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=250)
    parser.add_argument("--strings", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    config = TrainConfig(language="L6", depth=3, d_model=256, n_heads=1, d_ff=2048,
                         posenc="nope")
    model = build_model(config, 3).to(torch.float64).eval()
    quantized = QuantizedRun(model, 8, 4)
    tokens = torch.randint(0, 3, (arguments.strings, arguments.length + 1))
    tokens[:, 0] = 3   # BOS
    with torch.no_grad():
        float_s, exact_s = best_of_each(arguments.repeats, lambda: model(tokens),
                                        lambda: quantized(tokens), clock=time.process_time)
    per = arguments.strings
    print(f"{arguments.strings} strings of {arguments.length} tokens, d_model 256, depth 3")
    print(f"float64 forward      {float_s / per:.4f} s/string")
    print(f"exact arithmetic 8.4 {exact_s / per:.4f} s/string")
    print(f"ratio                {exact_s / float_s:.1f}x")


if __name__ == "__main__":
    main()
