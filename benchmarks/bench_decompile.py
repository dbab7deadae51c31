"""Decompiler benchmark: time and program size, on one core.

1. Every compilable example: compile it, then decompile the model (goal: under 10 s each);
   the decompile time is shown as a ratio to the compile time measured in the same run, and
   the program's size (definitions, comparisons) beside the original's.
2. Random small models (``crasp.compiler.random_models``, seeds 0..N-1): time, enumerated
   (query state, head output) pairs, definitions and depth against layers; models above the
   state limit are counted, not timed.

    python benchmarks/bench_decompile.py [--random 30] [--max-states 250000]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

import torch  # noqa: E402

import crasp  # noqa: E402
from crasp import syntax  # noqa: E402
from crasp.compiler import compile_program  # noqa: E402
from crasp.decompile.decompiling import decompile_model  # noqa: E402
from crasp.decompile.enumerate_states import DEFAULT_MAX_STATES, StateLimitError  # noqa: E402
from crasp.compiler.random_models import random_model  # noqa: E402
from timing import best_of  # noqa: E402


def comparisons(program: crasp.Program) -> int:
    return sum(isinstance(node, syntax.Compare)
               for d in program.definitions for node in syntax.walk(d.expr))


def examples(max_states: int) -> None:
    print(f"{'example':<14}{'layers':>7}{'compile s':>10}{'decompile s':>12}{'ratio':>8}"
          f"{'defs':>6}{'cmps':>6}{'orig defs':>10}{'orig cmps':>10}{'depth':>6}")
    slowest = 0.0
    for path in sorted((ROOT / "examples").glob("*.crasp")):
        program = crasp.load_program(path)
        try:
            compiled = best_of(3, lambda: compile_program(program))
        except crasp.ProgramError:
            continue  # positional predicates: not compilable
        model = compile_program(program)
        seconds = best_of(1, lambda: decompile_model(model, path.stem, max_states))
        result = decompile_model(model, path.stem, max_states)
        slowest = max(slowest, seconds)
        print(f"{path.stem:<14}{model.n_layers:>7}{compiled:>10.3f}{seconds:>12.3f}"
              f"{seconds / compiled:>7.0f}x{result.summary['definitions']:>6}"
              f"{comparisons(result.program):>6}{len(program.definitions):>10}"
              f"{comparisons(program):>10}{result.summary['depth']:>6}")
    print(f"slowest example: {slowest:.2f} s (goal < 10 s)")


def random_models(count: int, max_states: int) -> None:
    print(f"\n{'seed':>4}{'layers':>7}{'d_model':>8}{'seconds':>9}{'pairs enumerated':>24}"
          f"{'defs':>7}{'depth':>6}")
    refused = 0
    for seed in range(count):
        model = random_model(seed)
        try:
            seconds = best_of(1, lambda: decompile_model(model, str(seed), max_states))
        except StateLimitError:
            refused += 1
            continue
        result = decompile_model(model, str(seed), max_states)
        print(f"{seed:>4}{model.n_layers:>7}{model.config['d_model']:>8}{seconds:>9.2f}"
              f"{' '.join(map(str, result.summary['candidates'])):>24}"
              f"{result.summary['definitions']:>7}{result.summary['depth']:>6}")
    print(f"{refused} of {count} random models exceed --max-states {max_states:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=30)
    parser.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES)
    args = parser.parse_args()
    torch.set_num_threads(1)
    examples(args.max_states)
    random_models(args.random, args.max_states)


if __name__ == "__main__":
    main()
