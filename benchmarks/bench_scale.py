"""Scaling of the commands with the size of a program (issue 12, item 6; issue 32).

A chain of N definitions, each using the one before (``x_i = x_{i-1} + 1`` and
``x_i = x_{i-1} - #"a"`` alternately, answer ``x_{N-1} > 0``), is run through each command as
its own process (``python -m crasp.cli``, as a user runs it), timing the wall clock and reading
the process's peak memory. The baseline is the smallest N of the same invocation: linear
scaling shows as a time ratio equal to the size ratio.

    python benchmarks/bench_scale.py                       # N = 5,000 and 50,000
    python benchmarks/bench_scale.py --sizes 5000,500000   # 500,000 definitions: about 10 MB

``--expressions`` measures instead one long expression of N operands (issue 32: 10^5 within
5 s per command): an ``&&`` chain, a ``+`` chain of counts, and an ``A && B || C && D || ...``
chain (the form ``crasp decompile`` writes, once exponential in the reading that compares the
two dialects), each through ``run``, ``depth-check`` and ``fmt``, with the CPU seconds of the
process beside the wall clock (the machine is shared) and the ratio to the smallest N.

    python benchmarks/bench_scale.py --expressions                    # N = 10,000 and 100,000

``--edges`` measures the shapes the scaling audit found quadratic, each at N and 2N (the
baseline is N): a chain of N nested counts (``c_i = #(c_{i-1}) > #"b"``) through
``depth-check`` (reading it types Hahn's reading of every line) and through ``equiv P P
--unbounded --method smt --timeout 1`` (the time limit covers the lemma guessing: the CPU time
stays near the limit plus the reading), and a chain of 10 and 20 through the same ``equiv``
with no limit (proved at every length); a declared alphabet of N tokens with one count of each
through ``equiv P P --max-length 0`` (the verifier's token-only values); N input lines through
``run --trace`` (the answers read once).

    python benchmarks/bench_scale.py --edges
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
usage = resource.getrusage(resource.RUSAGE_SELF)
print("cpu", usage.ru_utime + usage.ru_stime, "maxrss", usage.ru_maxrss, file=sys.stderr)
sys.exit(code)
"""

EXPRESSIONS = {   # shape -> (the program of N operands, the input of crasp run)
    "&& chain": (lambda n: 'p = "a"\nq = "b"\nx = ' + " && ".join(["p", "q"] * (n // 2)) + "\n"),
    "+ chain": (lambda n: "c = " + " + ".join(['#"a"', '#"b"'] * (n // 2)) + "\nx = c > 0\n"),
    "&&/|| pairs": (lambda n: 'p = "a"\nq = "b"\nx = ' + " || ".join(["p && q"] * (n // 2))
                    + "\n"),
}


def chain_program(n: int) -> str:
    lines = ['alphabet "a" "b"', 'x0 = #"a" - #"b"']
    lines += [f"x{i} = x{i - 1} + 1" if i % 2 else f'x{i} = x{i - 1} - #"a"' for i in range(1, n)]
    lines.append(f"y = x{n - 1} > 0")
    return "\n".join(lines) + "\n"


def measure(arguments: list[str], stdin=None) -> tuple[float, float, float]:
    """Wall seconds, peak MiB and CPU seconds of one ``crasp`` command (``stdin``: a file to
    read its input from)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *arguments], env=environment,
                          stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 3):   # 3: equiv's "unknown", the time limit's answer
        raise SystemExit(f"crasp {' '.join(arguments)} failed:\n{done.stderr}")
    report = done.stderr.rsplit("cpu", 1)[1].split()
    return elapsed, int(report[2]) / 1024, float(report[0])


def expressions(sizes: list[int]) -> None:
    """One long expression per program, through run, depth-check and fmt."""
    with tempfile.TemporaryDirectory() as scratch:
        results: dict[tuple[str, str, int], tuple[float, float, float]] = {}
        for shape, program_text in EXPRESSIONS.items():
            for n in sizes:
                program = Path(scratch) / f"expression{n}.crasp"
                program.write_text(program_text(n))
                for command in ("run", "depth-check", "fmt"):
                    arguments = [command, str(program)] + (["a b"] if command == "run" else [])
                    results[shape, command, n] = measure(arguments)
                    seconds, peak, cpu = results[shape, command, n]
                    base_cpu = results[shape, command, sizes[0]][2]
                    print(f"{shape:>12} {command:>11}  N={n:>7,}  {seconds:6.2f} s wall  "
                          f"{cpu:6.2f} s CPU  {peak:6.0f} MiB  CPU x{cpu / base_cpu:5.1f}  "
                          f"(size x{n / sizes[0]:.0f})", flush=True)


def nested_counts(n: int) -> str:
    lines = ['alphabet "a" "b"', 'c0 = #"a" > #"b"']
    return "\n".join(lines + [f'c{i} = #(c{i - 1}) > #"b"' for i in range(1, n)]) + "\n"


def wide_alphabet(n: int) -> str:
    tokens = " ".join(f'"t{i}"' for i in range(n))
    return f"alphabet {tokens}\n" + "".join(f'd{i} = #"t{i}" > 0\n' for i in range(n))


EDGES = {   # shape -> (base N, the program of size N, the command's arguments after it)
    "nested counts, depth-check": (800, nested_counts, lambda program, _: ["depth-check",
                                                                          program]),
    "nested counts, equiv --timeout 1": (800, nested_counts, lambda program, _: [
        "equiv", program, program, "--unbounded", "--method", "smt", "--max-length", "8",
        "--timeout", "1"]),
    "nested counts, equiv (no limit)": (10, nested_counts, lambda program, _: [
        "equiv", program, program, "--unbounded", "--method", "smt"]),
    "alphabet, equiv --max-length 0": (5000, wide_alphabet, lambda program, _: [
        "equiv", program, program, "--max-length", "0"]),
    "lines, run --trace": (20000, None, lambda _, scratch: [
        "run", str(ROOT / "examples" / "majority.crasp"), "--trace",
        f"{scratch}/trace.txt", "--force"]),
}


def edges() -> None:
    """Each shape of ``EDGES`` at N and 2N, the CPU time's ratio beside the size's."""
    with tempfile.TemporaryDirectory() as scratch:
        for shape, (base, program_text, arguments) in EDGES.items():
            cpus = []
            for n in (base, 2 * base):
                program = Path(scratch) / f"{n}.crasp"
                lines = Path(scratch) / "lines.txt"   # the input, for the shape that reads it
                if program_text is not None:
                    program.write_text(program_text(n))
                    lines.write_text("")
                else:
                    lines.write_text("".join("a b a b b\n" if i % 2 else "a a b\n"
                                             for i in range(n)))
                with open(lines, "rb") as stdin:
                    seconds, peak, cpu = measure(arguments(str(program), scratch), stdin)
                cpus.append(cpu)
                print(f"{shape:>33}  N={n:>6,}  {seconds:6.2f} s wall  {cpu:6.2f} s CPU  "
                      f"{peak:6.0f} MiB  CPU x{cpu / cpus[0]:4.2f}  (size x{n / base:.0f})",
                      flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None,
                        help="definition (or operand) counts, the first is the baseline")
    parser.add_argument("--expressions", action="store_true",
                        help="one long expression of N operands instead of N definitions")
    parser.add_argument("--edges", action="store_true",
                        help="the shapes the scaling audit found quadratic, at N and 2N")
    options = parser.parse_args()
    if options.edges:
        edges()
        return
    default = "10000,100000" if options.expressions else "5000,50000"
    sizes = [int(n) for n in (options.sizes or default).split(",")]
    if options.expressions:
        expressions(sizes)
        return
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
                results[command, n] = measure(arguments)[:2]
                seconds, peak = results[command, n]
                base_seconds, base_peak = results[command, sizes[0]]
                print(f"{command:>11}  N={n:>7,} ({megabytes:5.2f} MB)  {seconds:7.2f} s  "
                      f"{peak:7.0f} MiB  time x{seconds / base_seconds:5.1f}  "
                      f"memory x{peak / base_peak:4.1f}  (size x{n / sizes[0]:.0f})",
                      flush=True)


if __name__ == "__main__":
    main()
