"""Reading a program both ways: the cost of Hahn's parser and of the warnings by construction.

On the 1,000-definition program of ``bench_compiler.py`` (every line read alike by both
parsers) and on the same program with each ``a < b && c`` line rewritten as
``!(a < b) && c || c``, which the two parsers read differently, best of 3:

* the baseline: conventional parse + check (``crasp.parse_program``);
* ``--dialect hahn``: Hahn's parser + check;
* the warnings (``crasp.hahn.precedence_warnings``): Hahn's reading of every line and the
  comparison of canonical forms.

    python benchmarks/bench_hahn.py [--definitions 1000]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import crasp
from crasp.hahn import precedence_warnings
from bench_compiler import generated_program
from timing import best_of

ROOT = Path(__file__).resolve().parent.parent


def differing(text: str) -> str:
    """Each ``a < b && c`` line as ``!(a < b) && c || c`` (Hahn: ``!((a < b) && c || c)``)."""
    return re.sub(r"= (\w+) < (\w+) && (\w+)$", r"= !(\1 < \2) && \3 || \3", text, flags=re.M)


def measure(name: str, text: str) -> None:
    baseline = best_of(3, lambda: crasp.parse_program(text))
    hahn = best_of(3, lambda: crasp.parse_program(text, dialect="hahn"))
    program = crasp.parse_program(text)
    warnings = best_of(3, lambda: precedence_warnings(program))
    count = len(precedence_warnings(program))
    print(f"{name}: {len(program.definitions)} definitions, {count} warnings")
    print(f"  parse + check (baseline) {baseline:.3f} s; --dialect hahn {hahn:.3f} s "
          f"({hahn / baseline:.1f}x); warnings {warnings:.3f} s ({warnings / baseline:.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=int, default=1000)
    args = parser.parse_args()
    # Hahn's grammar has no alphabet line; the program's literals give the same alphabet
    text = re.sub(r"^alphabet .*\n", "", generated_program(args.definitions), flags=re.M)
    measure("read alike", text)
    measure("read differently", differing(text))


if __name__ == "__main__":
    main()
