"""Interpreter throughput: 10,000 random strings of length 100 with the Dyck-1 and L_6 programs.

Prints tokens per second on one core for the vectorized interpreter (encoding included, and
evaluation alone), and the same for the per-position pure-Python reference evaluator of the
test suite (the approach of Hahn's interpreter) on a 100-string sample, with the ratio.

    python benchmarks/bench_interpreter.py [--strings 10000] [--length 100]

``--hahn-dir DIR`` (a checkout of m-hahn/c-rasp; the Python running this needs its
``antlr4-python3-runtime``) measures instead Hahn's in-process evaluation (his ``parse_file``
and ``Program.execute`` per input) against ``crasp.evaluate`` (encoding included) on his Dyck-1
example ``examples/dyck1_yc24.cr``, on 1,000 random strings over ( ) of lengths 1 to 60 and on
10,000 of lengths 1 to 100: processor time of this process (not the time other jobs of a shared
machine hold the cores), best of 5 turns, his and crasp's alternating, crasp's turn as many
calls in a row as take about one of his runs (its time per call the mean), so that both see the
same load; the answers compared on every string. His code is imported from DIR at run time,
never copied here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

import crasp  # noqa: E402
from crasp.interpret import encode_flat, evaluate_flat  # noqa: E402
from reference import evaluate_at  # noqa: E402
from timing import best_of, best_of_each  # noqa: E402


def against_hahn(hahn_dir: str) -> None:
    """Hahn's interpreter, in process, on his Dyck-1 example, and crasp on the same inputs."""
    import random

    sys.path.insert(0, hahn_dir)
    from parser import parse_file   # noqa: his checkout's module

    example = str(Path(hahn_dir) / "examples" / "dyck1_yc24.cr")
    his = parse_file(example)
    ours = crasp.load_program(example, dialect="hahn")
    rng = random.Random(0)
    for count, longest in ((1000, 60), (10_000, 100)):
        strings = [[rng.choice("()") for _ in range(rng.randint(1, longest))]
                   for _ in range(count)]
        theirs = lambda: [his.execute(tokens) for tokens in strings]  # noqa: E731
        answers = lambda: crasp.evaluate(ours, strings).accept  # noqa: E731
        # crasp's timing spans as many calls in a row as take about one of Hahn's runs, so
        # that both meet the same share of a shared machine's load
        calls = max(1, round(best_of(1, theirs) / best_of(3, answers)))
        hahn, interpreter = best_of_each(5, theirs, lambda: [answers() for _ in range(calls)],
                                         clock=time.process_time)
        interpreter /= calls
        same = [bool(his.execute(t)) for t in strings] == answers().tolist()
        batch = encode_flat(ours, strings)
        encoding, evaluation = best_of_each(5, lambda: encode_flat(ours, strings),
                                            lambda: evaluate_flat(ours, batch).accept,
                                            clock=time.process_time)
        tokens = sum(map(len, strings))
        print(f"{count:,} strings of length 1-{longest} ({tokens:,} tokens): Hahn "
              f"{hahn * 1e3:.1f} ms, crasp (encoding included) {interpreter * 1e3:.2f} ms (mean "
              f"of {calls} calls): {hahn / interpreter:.1f}x (same answers: {same}); crasp's "
              f"encoding {encoding * 1e3:.2f} ms, evaluation {evaluation * 1e3:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strings", type=int, default=10_000)
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--baseline-strings", type=int, default=100)
    parser.add_argument("--hahn-dir", help="compare with Hahn's interpreter in this checkout")
    args = parser.parse_args()
    if args.hahn_dir:
        against_hahn(args.hahn_dir)
        return
    rng = np.random.default_rng(0)
    print(f"{'program':<10} {'interpreter tok/s':>18} {'(evaluate only)':>16} "
          f"{'reference tok/s':>16} {'ratio':>8}")
    for name in ("dyck1", "L6"):
        program = crasp.load_program(ROOT / "examples" / f"{name}.crasp")
        alphabet = np.array(program.alphabet)
        # Python strings, as crasp.api_inputs makes them (list(row) would give numpy strings)
        strings = alphabet[rng.integers(0, len(alphabet), (args.strings, args.length))].tolist()
        tokens = args.strings * args.length
        total = best_of(3, lambda: crasp.evaluate(program, strings))
        batch = encode_flat(program, strings)
        evaluate_only = best_of(3, lambda: evaluate_flat(program, batch))
        sample = strings[:args.baseline_strings]
        reference = best_of(1, lambda: [evaluate_at(program, s, i) for s in sample
                                        for i in range(len(s))])
        reference_rate = len(sample) * args.length / reference
        print(f"{name:<10} {tokens / total:>18,.0f} {tokens / evaluate_only:>16,.0f} "
              f"{reference_rate:>16,.0f} {tokens / total / reference_rate:>7,.0f}x")


if __name__ == "__main__":
    main()
