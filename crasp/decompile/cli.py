"""``crasp decompile MODEL -o PROG.crasp``: write the program and print its summary.

Loaded lazily by ``crasp/cli.py``, which turns every ``CraspError`` into its message on stderr
and exit status 2. Exit status 1 when ``--verify`` finds a disagreement.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import click

import crasp
from crasp.cli import verification_options
from crasp.compiler.verification import VerificationResult, verify
from crasp.decompile.decompiling import decompile_model, format_decompile_summary
from crasp.decompile.budget import DEFAULT_MAX_STATES
from crasp.decompile.write_program import HEADER
from crasp.errors import CraspError
from crasp.models import load_model
from crasp.util.atomic import rewrite_in_place
from crasp.util.outputs import write_file, writing
from crasp.util.progress import wants_progress
from crasp.verify.cli import prove_equivalence, prove_option


def check_program_output(output: str, force: bool) -> bool:
    """Refuse a place that holds anything but a program this command wrote (and that only
    with --force); returns whether there is one to replace (perhaps behind a symbolic link)."""
    path = Path(output)
    if path.suffix not in crasp.PROGRAM_SUFFIXES:
        raise CraspError(f"-o {output!r}: the program file must end in .crasp or .cr "
                         f"(or use -o - for standard output)")
    if not path.exists():
        if path.is_symlink():
            raise CraspError(f"refusing to write to {output!r}: it is a symbolic link to "
                             f"nothing (to {os.readlink(path)!r})")
        return False
    try:
        ours = path.is_file() and path.read_text(encoding="utf-8").startswith(HEADER)
    except (OSError, UnicodeDecodeError):
        ours = False
    if not ours:
        raise CraspError(f"refusing to overwrite {output!r}: it exists and is not a program "
                         f"written by crasp decompile")
    if not force:
        raise CraspError(f"{output!r} exists (a program written by crasp decompile); pass "
                         f"--force to replace it")
    return True


def write_program_file(output: str, text: str, force: bool) -> None:
    """The program on standard output (``-``) or into ``output`` (checked by
    ``check_program_output`` before the work, and again now: an extraction takes hours, and a
    person may have made or changed the file meanwhile): atomically, never over a file made
    since, or in place where it replaces one of ours (with ``force``)."""
    if output == "-":
        click.echo(text, nl=False)
        return
    if check_program_output(output, force):
        with writing(output, "program"):   # through a symbolic link, into the same file
            rewrite_in_place(output, text.encode("utf-8"))
    else:
        write_file(output, "program", text.encode("utf-8"), replacing=False)


def _describe(result: VerificationResult) -> str:
    if result.ok:
        random = (f" and {result.random_strings} random strings of length up to "
                  f"{result.random_length}" if result.random_strings else "")
        return (f"the decompiled program agrees with the model ({result.layers} layers) at every "
                f"position of {result.checked_strings} strings: all strings up to length "
                f"{result.exhaustive_length}{random}")
    tokens = result.counterexample or []
    where = ("at BOS (the empty input)" if result.position == -1
             else f"at position {result.position}")
    return (f"on the input {' '.join(tokens)!r} ({len(tokens)} tokens) {where}, the model "
            f"answers {result.got} but the decompiled program answers {result.expected}")


def vocabulary_only_option(command):
    """``--vocabulary-only`` (decompile and extract)."""
    return click.option(
        "--vocabulary-only", is_flag=True,
        help="Answer as the model on the strings of its own tokens only (not on a token "
             "outside the vocabulary): the program is shrunk for them before the readable "
             "pass, often to a few definitions. See docs/decompile.md.")(command)


@click.command("decompile")
@click.argument("model_dir", metavar="MODEL", type=click.Path())
@click.option("-o", "--out", "--output", "output", required=True, metavar="PROG.crasp",
              help="The program file to write (- for standard output).")
@click.option("--max-states", type=click.IntRange(min=1), default=DEFAULT_MAX_STATES,
              show_default=True,
              help="The work budget: stop before the work would exceed this many units (a "
                   "unit: a (query state, head output) pair enumerated, 40 (query state, key "
                   "state) pairs of the attention tables or entries of an ALiBi window, or a "
                   "count term written).")
@click.option("--force", is_flag=True,
              help="Replace PROG.crasp if it is a program crasp decompile wrote.")
@click.option("--json", "as_json", is_flag=True,
              help='Print the summary as JSON: {"layers", "depth", "states", "candidates", '
                   '"definitions", "comparisons", "depths", "work", ...}.')
@click.option("--verify", "verify_flag", is_flag=True,
              help="Run the model and the program on all short and some long random strings.")
@vocabulary_only_option
@verification_options
@prove_option
def decompile_command(model_dir, output, max_states, force, as_json, verify_flag,
                      vocabulary_only, max_length, random_length, random_count, seed, progress,
                      prove_length):
    """Decompile MODEL (a crasp model directory) into a C-RASP program of the same depth.

    The program answers exactly as the model at every position of every input, the empty
    input and tokens outside the vocabulary included; it has one counting level per layer
    (fewer only where its answer provably needs fewer). Any model in the crasp format works,
    compiled or not; the cost grows with the number of residual states, which --max-states
    bounds. See docs/decompile.md.

    \b
      crasp compile examples/dyck1.crasp -o dyck1.model
      crasp decompile dyck1.model -o dyck1.decompiled.crasp --verify
      crasp depth-check dyck1.decompiled.crasp
      crasp decompile dyck1.model -o dyck1.decompiled.crasp --prove 20

    --prove [N] proves the program equivalent, on every string of length ≤ N, to the model's
    original program (the file config.json names, if it is still there unchanged) with crasp
    equiv (over the vocabulary only, with --vocabulary-only); without it, it runs the model
    and the program on every string of length ≤ N over the vocabulary. Exit status 1 if they
    differ.
    """
    if output != "-":
        check_program_output(output, force)   # before the work; again when it is written
    model = load_model(model_dir, "decompile").executable
    result = decompile_model(model, source=model_dir, max_states=max_states,
                             vocabulary_only=vocabulary_only, progress=wants_progress(progress))
    summary = dict(result.summary)
    verification = None
    if verify_flag:
        verification = verify(result.program, max_length, random_length, random_count, seed,
                              model=model, progress=wants_progress(progress))
        summary["verify"] = {"ok": verification.ok,
                             "checked_strings": verification.checked_strings,
                             "counterexample": verification.counterexample,
                             "message": _describe(verification)}
    write_program_file(output, result.text, force)
    if output != "-":
        summary["output"] = output
    proved = prove_length is None or _prove(model, result.program, prove_length,
                                            vocabulary_only)
    report = json.dumps(summary, indent=2) if as_json else format_decompile_summary(summary)
    if verification is not None and not as_json:
        report += ("\nverified: " if verification.ok else "\nMISMATCH: ") + _describe(verification)
    if output != "-" and not as_json:
        report += f"\n\nwrote {output}"
    click.echo(report, err=output == "-")
    sys.exit(0 if proved and (verification is None or verification.ok) else 1)


def original_program(config: dict) -> tuple[crasp.Program | None, str]:
    """The program the model was compiled from, if config.json names a file that still holds
    the text it was compiled from (``program_sha256``); else None and why not."""
    name = config.get("program_file")
    if not isinstance(name, str) or not name or name.startswith("<"):
        return None, "config.json names no program file"
    try:
        text = crasp.read_program_text(name)
    except (CraspError, ValueError):   # ValueError: a NUL in the name, which no path holds
        return None, f"config.json names {name!r}, which cannot be read"
    if hashlib.sha256(text.removeprefix("\ufeff").encode("utf-8")).hexdigest() \
            != config.get("program_sha256"):
        return None, f"{name!r} has changed since the model was compiled"
    for dialect in crasp.DIALECTS:
        try:
            return crasp.parse_program(text, name, dialect=dialect), ""
        except CraspError:
            continue
    return None, f"{name!r} no longer parses"


def _prove(model, program: crasp.Program, max_length: int, vocabulary_only: bool) -> bool:
    """--prove: equiv with the original program (over the vocabulary, if that is all the
    program answers for), or (without one) the model run against the program on every string
    of length <= max_length; the verdict on stderr."""
    original, missing = original_program(model.config)
    if original is not None:
        return prove_equivalence(original, program, max_length, "decompile --prove",
                                 tuple(model.config["vocab"]) if vocabulary_only else None)
    result = verify(program, max_length, 1, 0, 0, model=model)
    click.echo(f"decompile --prove: {missing}; so the model itself was run instead: "
               + _describe(result), err=True)
    return result.ok
