"""Positional models beside NoPE models of the same depth: compile time and executor throughput.

1. Compile time, best of 3: the generated 1,000-definition program of ``bench_compiler`` (NoPE)
   against the same program with positional constructs put in (every ``if "c"`` guard becomes
   ``if mod(3, 1)``, and one count in ``--local-every`` becomes ``#[offset(k)]``, k = 1..3), which
   keeps its depth (a guarded count is a level, like ``#``).
2. Exact-executor throughput (tokens/s, encoding included, best of 2) on random strings, for
   pairs of the same depth: majority (NoPE) against aa_star (a periodic table) and
   memory-xor-1-2-4-8 (four ALiBi heads) at depth 1, dyck1 against contains_ab at depth 2.

Every ratio is NoPE / positional, measured in this one run.

    python benchmarks/bench_positional.py [--definitions 1000] [--strings 1000] [--length 1000]
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

import numpy as np  # noqa: E402
import torch  # noqa: E402

import crasp  # noqa: E402
from bench_compiler import generated_program  # noqa: E402
from crasp.compiler import compile_program, execute  # noqa: E402
from crasp.languages.registry import get_language  # noqa: E402
from timing import best_of  # noqa: E402


def positional_variant(text: str, local_every: int) -> str:
    """``text`` with the ``if "c"`` guards periodic and one count in ``local_every`` local."""
    lines = []
    for index, line in enumerate(text.splitlines()):
        line = line.replace('if "c"', "if mod(3, 1)")
        if index % local_every == 0 and re.search(r"= #\w", line):
            line = line.replace("= #", f"= #[offset({index % 3 + 1})] ", 1)
        lines.append(line)
    return "\n".join(lines) + "\n"


def compile_time(definitions: int, local_every: int) -> None:
    nope = crasp.parse_program(generated_program(definitions))
    positional = crasp.parse_program(positional_variant(generated_program(definitions),
                                                       local_every))
    print(f"compile time, {definitions:,} definitions (best of 3, one core)")
    print(f"{'program':<12}{'depth':>6}{'layers':>7}{'heads':>6}{'d_model':>8}{'params':>12}"
          f"{'compile s':>11}")
    seconds = {}
    for name, program in (("NoPE", nope), ("positional", positional)):
        seconds[name] = best_of(3, lambda: compile_program(program))
        config = compile_program(program).config
        params = compile_program(program).params
        print(f"{name:<12}{config['depth']:>6}{config['n_layers']:>7}{config['n_heads']:>6}"
              f"{config['d_model']:>8}{params:>12,}{seconds[name]:>11.3f}")
    print(f"positional / NoPE compile time: {seconds['positional'] / seconds['NoPE']:.2f}x")


def load(name: str) -> crasp.Program:
    path = ROOT / "examples" / f"{name}.crasp"
    return crasp.load_program(path) if path.exists() else get_language(name).program.load()


def throughput(strings: int, length: int) -> None:
    rng = np.random.default_rng(0)
    print(f"\nexact executor on {strings:,} random strings of length {length:,} "
          f"(tokens/s, best of 2, one core)")
    print(f"{'depth':<6}{'NoPE':<10}{'tokens/s':>12}  {'positional':<20}{'heads':>6}"
          f"{'tokens/s':>12}{'NoPE/pos':>10}")
    tokens = strings * length
    for depth, nope, positional in ((1, "majority", "aa_star"),
                                    (1, "majority", "memory-xor-1-2-4-8"),
                                    (2, "dyck1", "contains_ab")):
        rates = []
        for name in (nope, positional):
            program = load(name)
            assert crasp.depth_of(program) == depth, name
            model = compile_program(program)
            alphabet = np.array(program.alphabet)
            inputs = [list(row) for row in
                      alphabet[rng.integers(0, len(alphabet), (strings, length))]]
            rates.append((tokens / best_of(2, lambda: execute(model, inputs)),
                          model.config["n_heads"]))
        print(f"{depth:<6}{nope:<10}{rates[0][0]:>12,.0f}  {positional:<20}{rates[1][1]:>6}"
              f"{rates[1][0]:>12,.0f}{rates[0][0] / rates[1][0]:>9.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=int, default=1000)
    parser.add_argument("--local-every", type=int, default=10)
    parser.add_argument("--strings", type=int, default=1000)
    parser.add_argument("--length", type=int, default=1000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    compile_time(args.definitions, args.local_every)
    throughput(args.strings, args.length)


if __name__ == "__main__":
    main()
