"""Scaling of depth-check, compile and fmt with the size of a program (issue 12, item 6).

A chain of N definitions, each using the one before (``x_i = x_{i-1} + 1`` and
``x_i = x_{i-1} - #"a"`` alternately, answer ``x_{N-1} > 0``), is run through each command as
its own process (``python -m crasp.cli``, as a user runs it), timing the wall clock and reading
the process's peak memory. The baseline is the smallest N of the same invocation: linear
scaling shows as a time ratio equal to the size ratio.

    python benchmarks/bench_scale.py                       # N = 5,000 and 50,000
    python benchmarks/bench_scale.py --sizes 5000,500000   # 500,000 definitions: about 10 MB
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs the CLI in-process and reports the peak resident memory (KiB on Linux) on stderr.
WRAPPER = """
import resource, sys
from crasp.cli import cli
try:
    cli(sys.argv[1:], prog_name="crasp")
except SystemExit as stop:
    code = stop.code
else:
    code = 0
print("maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def chain_program(n: int) -> str:
    lines = ['alphabet "a" "b"', 'x0 = #"a" - #"b"']
    lines += [f"x{i} = x{i - 1} + 1" if i % 2 else f'x{i} = x{i - 1} - #"a"' for i in range(1, n)]
    lines.append(f"y = x{n - 1} > 0")
    return "\n".join(lines) + "\n"


def measure(arguments: list[str]) -> tuple[float, float]:
    """Wall seconds and peak MiB of one ``crasp`` command."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *arguments], env=environment,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"crasp {' '.join(arguments)} failed:\n{done.stderr}")
    peak = int(done.stderr.rsplit("maxrss", 1)[1].split()[0])
    return elapsed, peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,50000",
                        help="definition counts, the first is the baseline")
    sizes = [int(n) for n in parser.parse_args().sizes.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        results: dict[tuple[str, int], tuple[float, float]] = {}
        for n in sizes:
            program = Path(scratch) / f"chain{n}.crasp"
            program.write_text(chain_program(n))
            megabytes = program.stat().st_size / 1e6
            for command, arguments in (
                    ("depth-check", ["depth-check", str(program)]),
                    ("compile", ["compile", str(program), "-o", f"{scratch}/m{n}"]),
                    ("fmt", ["fmt", str(program)])):
                results[command, n] = measure(arguments)
                seconds, peak = results[command, n]
                base_seconds, base_peak = results[command, sizes[0]]
                print(f"{command:>11}  N={n:>7,} ({megabytes:5.2f} MB)  {seconds:7.2f} s  "
                      f"{peak:7.0f} MiB  time x{seconds / base_seconds:5.1f}  "
                      f"memory x{peak / base_peak:4.1f}  (size x{n / sizes[0]:.0f})",
                      flush=True)


if __name__ == "__main__":
    main()
