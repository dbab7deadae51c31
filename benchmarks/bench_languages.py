"""Dataset throughput: one 10,000-string bin of lengths 201-250 for L_8 and Dyck-1.

For each language, prints strings per second for a whole training bin (``build_task``: draw,
train/validation partition, oracle labels, token lists), for drawing alone and for labelling
alone, and for the same bin labelled through the interpreter by a shipped program
(examples/L8_predict.crasp, examples/dyck1.crasp) as a program-defined language. The baseline
is the paper's generator (``generate_data.py`` of pentagonalize/CRASP_depth: ``random.sample``
switch positions and Python string building, labels included), reimplemented here for L_8.
Goal: a 10,000-string bin in under 2 s.

    python benchmarks/bench_languages.py [--strings 10000] [--bin 201:250]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from crasp.languages import build_task, get_language, parse_bin  # noqa: E402
from timing import best_of  # noqa: E402


def paper_generator(count: int, lo: int, hi: int, k: int) -> list[tuple[str, str]]:
    """pentagonalize/CRASP_depth generate_data.py, for k >= 2."""
    pairs = []
    for _ in range(count):
        n = random.randint(max(lo, k), hi)
        switches = sorted(random.sample(range(1, n), k - 1))
        source, target, letter, last = [], [], "a", switches[-1]
        for i in range(n):
            if i in switches:
                letter = "b" if letter == "a" else "a"
            source.append(letter)
            target.append("1" if i >= last else "0")
        pairs.append(("".join(source), "".join(target)))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strings", type=int, default=10_000)
    parser.add_argument("--bin", default="201:250")
    args = parser.parse_args()
    lo, hi = parse_bin(args.bin)
    n = args.strings
    print(f"{n:,} strings, lengths {lo}-{hi}, best of 3, one core")
    print(f"{'language':<10} {'bin (s)':>8} {'strings/s':>10} {'draw/s':>10} {'label/s':>10} "
          f"{'interpreter-labelled bin (s)':>29}")
    for name in ("L8", "dyck1"):
        lang = get_language(name)
        whole = best_of(3, lambda: build_task(lang, (lo, hi), [], n, 0, 0.2, seed=0))
        rng = np.random.default_rng(0)
        lengths = lang.lengths_in(lo, hi)
        strings = [lang.sample_ids(int(rng.choice(lengths)), rng) for _ in range(n)]

        def draw():
            generator = np.random.default_rng(0)
            for _ in range(n):
                lang.sample_ids(int(lengths[generator.integers(len(lengths))]), generator)

        drawing = best_of(3, draw)
        labelling = best_of(3, lambda: lang.labels_of(strings))
        path = lang.prediction_program_path or lang.program_path  # a shipped file
        program = get_language(f"{path}@{name}")
        interpreted = best_of(3, lambda: build_task(program, (lo, hi), [], n, 0, 0.2, seed=0))
        print(f"{name:<10} {whole:>8.3f} {n / whole:>10,.0f} {n / drawing:>10,.0f} "
              f"{n / labelling:>10,.0f} {interpreted:>29.3f}")
    random.seed(0)
    baseline = best_of(3, lambda: paper_generator(n, lo, hi, 8))
    print(f"{'L8 paper':<10} {baseline:>8.3f} {n / baseline:>10,.0f}   (the paper's "
          "generate_data.py, labels included)")


if __name__ == "__main__":
    main()
