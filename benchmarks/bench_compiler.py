"""Compiler benchmarks: compile time, residual width against the bound, executor throughput.

1. Compile time of a generated program of 1,000 definitions (goal: under 2 s), best of 3,
   next to its parse time.
2. d_model of every compilable example against the bound #Boolean definitions + #comparisons
   + |alphabet| + 3, with layers, heads, FFN widths, parameters and precision.
3. Exact-executor throughput (tokens/s) on 1,000 random strings of length 1,000, next to the
   interpreter on the same strings (both include encoding), and the float mode (which also
   runs the exact model, to compare).

    python benchmarks/bench_compiler.py [--definitions 1000] [--strings 1000] [--length 1000]
"""

from __future__ import annotations

import argparse
import os
import random
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

import numpy as np  # noqa: E402
import torch  # noqa: E402

import crasp  # noqa: E402
from crasp.compiler import compile_program, execute  # noqa: E402
from crasp.compiler.compiling import d_model_bound  # noqa: E402
from timing import best_of  # noqa: E402


def generated_program(definitions: int, max_depth: int = 8, seed: int = 0) -> str:
    """A random well-typed program in which every definition is used: each line is a count
    (of a Boolean, plus or minus twice another count, one time in ten a min or if-else) or a
    Boolean (a comparison, possibly with a connective) over earlier lines, preferring lines
    not used yet; depth at most ``max_depth``. The last line ORs what is still unused."""
    rng = random.Random(seed)
    depth: dict[str, int] = {'"a"': 0, '"b"': 0}
    booleans, counts = ['"a"', '"b"'], []
    unused: list[str] = []

    def pick(pool: list[str], shallow: bool = False) -> str:
        pool = [n for n in pool if not shallow or depth[n] < max_depth] or booleans[:2]
        fresh = [n for n in unused if n in set(pool[-40:])]
        name = rng.choice(fresh) if fresh and rng.random() < 0.7 else rng.choice(pool[-40:])
        if name in unused:
            unused.remove(name)
        return name

    lines = ['alphabet "a" "b" "c"']
    for index in range(definitions - 1):
        name = f"d{index}"
        if len(counts) < 2 or rng.random() < 0.45:
            body = pick(booleans, shallow=True)
            if counts and rng.random() < 0.5:
                other = pick(counts)
                expr = rng.choice([f"#{body} + {other}", f"#{body} - 2 * {other}"] * 4
                                  + [f"min(#{body}, {other} + 1)", f'#{body} if "c" else {other}'])
                depth[name] = max(depth[body] + 1, depth[other])
            else:
                expr, depth[name] = f"#{body}", depth[body] + 1
            counts.append(name)
        else:
            left, right, other = pick(counts), pick(counts), pick(booleans)
            expr = rng.choice([f"{left} < {right} && {other}",
                               f"{left} == {rng.randint(0, 3)} + {right} && {other}",
                               f"{left} >= {right} && !{other}", f"{other} || {left} != {right}"])
            depth[name] = max(depth[left], depth[right], depth[other])
            booleans.append(name)
        lines.append(f"{name} = {expr}")
        unused.append(name)
    leftovers = [n if n in booleans else f"{n} > 0" for n in unused]
    lines.append("answer = " + " || ".join(leftovers))
    return "\n".join(lines) + "\n"


def compile_time(definitions: int) -> None:
    text = generated_program(definitions)
    parse = best_of(3, lambda: crasp.parse_program(text))
    program = crasp.parse_program(text)
    compiled = best_of(3, lambda: compile_program(program))
    model = compile_program(program)
    c = model.config
    print(f"generated program: {len(program.definitions)} definitions, depth {c['depth']}")
    print(f"  parse + check {parse:.3f} s; compile {compiled:.3f} s (goal < 2 s)")
    print(f"  -> {c['n_layers']} layers, d_model {c['d_model']} (bound {c['d_model_bound']}), "
          f"d_head {c['d_head']}, max FFN width "
          f"{max((max(w) for w in c['ffn_widths']), default=0)}, {model.params:,} parameters, "
          f"p = {c['precision']['total_bits']}")


def widths() -> None:
    print(f"\n{'example':<16}{'depth':>6}{'layers':>7}{'d_model':>8}{'bound':>6}{'d_head':>7}"
          f"{'params':>8}{'p':>3}  ffn widths")
    for path in sorted((ROOT / "examples").glob("*.crasp")):
        program = crasp.load_program(path)
        if crasp.syntax.is_positional(program):
            print(f"{path.stem:<16}  positional: see bench_positional.py")
            continue
        model = compile_program(program)
        c = model.config
        print(f"{path.stem:<16}{c['depth']:>6}{c['n_layers']:>7}{c['d_model']:>8}"
              f"{d_model_bound(program):>6}{c['d_head']:>7}{model.params:>8}"
              f"{c['precision']['total_bits']:>3}  "
              + "; ".join(" ".join(map(str, w)) for w in c["ffn_widths"]))


def throughput(strings: int, length: int) -> None:
    rng = np.random.default_rng(0)
    print(f"\nthroughput on {strings:,} random strings of length {length:,} (tokens/s, one core)")
    print(f"{'program':<10}{'exact executor':>16}{'float mode*':>16}{'interpreter':>14}"
          f"{'interp/exact':>14}")
    for name in ("majority", "dyck1", "anbncn", "L6"):
        program = crasp.load_program(ROOT / "examples" / f"{name}.crasp")
        model = compile_program(program)
        alphabet = np.array(program.alphabet)
        inputs = [list(row) for row in alphabet[rng.integers(0, len(alphabet), (strings, length))]]
        tokens = strings * length
        exact = best_of(2, lambda: execute(model, inputs))
        plain = best_of(1, lambda: execute(model, inputs, mode="float"))
        interpreter = best_of(2, lambda: crasp.evaluate(program, inputs))
        print(f"{name:<10}{tokens / exact:>16,.0f}{tokens / plain:>16,.0f}"
              f"{tokens / interpreter:>14,.0f}{exact / interpreter:>13.1f}x")
    print("* float mode also runs the exact model, to find where their decisions first differ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=int, default=1000)
    parser.add_argument("--strings", type=int, default=1000)
    parser.add_argument("--length", type=int, default=1000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    compile_time(args.definitions)
    widths()
    throughput(args.strings, args.length)


if __name__ == "__main__":
    main()
