"""Each program of the extraction study, shrunk for its language's tokens as ``crasp decompile
--vocabulary-only`` shrinks a decompiled program (``crasp.decompile.vocabulary``, then the
readable pass), with its definitions and depth before and after, and a check by the
interpreter alone: both answer alike at every position of every string over the tokens up to
``--max-length`` (default 6).

    python docs/extraction/vocabulary_only.py [--max-length 6]

The committed programs are the study's output (already through the readable pass), not
``write_program``'s, so a program from ``crasp decompile RUN --vocabulary-only`` can differ
from these in form, not in answers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import crasp
from crasp.decompile import vocabulary
from crasp.decompile.budget import Budget
from crasp.decompile.decompiling import shorter
from crasp.verify import Question, enumeration

PROGRAMS = Path(__file__).resolve().parent / "programs"


def rows(max_length: int) -> list[str]:
    lines = []
    for path in sorted(PROGRAMS.glob("*.crasp")):
        text = path.read_text(encoding="utf-8")
        exact = crasp.parse_program(text, path.name)
        tokens = tuple(exact.alphabet)
        shrunk_text, shrunk = vocabulary.over_vocabulary(text, exact, tokens)
        _, shrunk, _ = shorter(shrunk_text, shrunk, Budget(10**9), vocabulary.NOTE)
        question = Question("equivalent", (exact, shrunk), ("A", "B"))
        same = enumeration.first_violation(question, tokens, max_length) is None
        lines.append(f"{path.stem}: {len(exact.definitions)} -> {len(shrunk.definitions)} "
                     f"definitions, depth {crasp.depth_of(exact)} -> {crasp.depth_of(shrunk)}, "
                     f"{'same' if same else 'DIFFERENT'} answers up to length {max_length}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-length", type=int, default=6)
    print("\n".join(rows(parser.parse_args().max_length)))


if __name__ == "__main__":
    main()
