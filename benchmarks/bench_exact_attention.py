"""The format's exact arithmetic against the float forward pass, on a run of the paper grid's
size (``crasp extract``'s precision choice and fidelity, ``crasp eval`` of a ``--precision``
run, and ``crasp train --precision`` all read every string this way).

A randomly initialized trainer model (NoPE, d_model 256, one head, d_ff 2048, depth 3: the
third edition's L6 d3 cell) reads a batch of random strings, in float64 (the baseline, as
``crasp extract`` reads its reference) and read at a precision (8.4 unless ``--precision``;
``QuantizedRun``, whose heads are ``crasp.train.exact_attention.fixed_attention``).
``--run RUN`` reads a trained NoPE run's model and its longest test strings instead.
``--query-scale`` multiplies the query projections: a trained run's attention is sharper
than a random one's (more weights round to 0, more distinct weights are present). Prints the
seconds per string of each and their ratio; the two timings take turns
(``timing.best_of_each``) and count this process's processor time only, so the sweeps
sharing the machine change them little.

    python benchmarks/bench_exact_attention.py [--precision 8.4] [--query-scale 1]
        [--length 250] [--strings 16] [--repeats 3] [--run RUN]
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from crasp.train.config import TrainConfig  # noqa: E402
from crasp.train.fixed_precision import parse_precision  # noqa: E402
from crasp.train.model import build_model  # noqa: E402
from crasp.train.quantize import QuantizedRun  # noqa: E402
from timing import best_of_each  # noqa: E402


def random_model(arguments):
    torch.manual_seed(0)
    config = TrainConfig(language="L6", depth=3, d_model=256, n_heads=1, d_ff=2048,
                         posenc="nope")
    model = build_model(config, 3).to(torch.float64).eval()
    with torch.no_grad():
        for layer in model.layers:
            layer.attn.q.weight.mul_(arguments.query_scale)
    tokens = torch.randint(0, 3, (arguments.strings, arguments.length + 1))
    tokens[:, 0] = 3   # BOS
    return model, tokens, (f"{arguments.strings} strings of {arguments.length} tokens, "
                           f"d_model 256, depth 3, query scale {arguments.query_scale}")


def trained_run(arguments):
    from crasp.train.analysis.loading import load_run

    loaded = load_run(arguments.run)
    model = copy.deepcopy(loaded.model).to(torch.float64).eval()
    tokens = loaded.longest.eval_batches(1 << 30)[0].tokens[:arguments.strings]
    return model, tokens, (f"{len(tokens)} of the longest test strings ({tokens.shape[1] - 1} "
                           f"positions) of {arguments.run}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", default="8.4")
    parser.add_argument("--query-scale", type=float, default=1.0,
                        help="multiply the query projections (sharper attention, as trained "
                             "runs have: more weights round to 0, and more rows have only 0s)")
    parser.add_argument("--run", help="a trained NoPE run: its model, and its longest test "
                                       "strings (--strings of them), instead of random ones")
    parser.add_argument("--length", type=int, default=250)
    parser.add_argument("--strings", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    model, tokens, what = (trained_run(arguments) if arguments.run else
                           random_model(arguments))
    quantized = QuantizedRun(model, *parse_precision(arguments.precision))
    with torch.no_grad():
        float_s, exact_s = best_of_each(arguments.repeats, lambda: model(tokens),
                                        lambda: quantized(tokens), clock=time.process_time)
    per = len(tokens)
    print(what)
    print(f"float64 forward      {float_s / per:.4f} s/string")
    print(f"exact arithmetic {arguments.precision:<4}{exact_s / per:.4f} s/string")
    print(f"ratio                {exact_s / float_s:.1f}x")


if __name__ == "__main__":
    main()
