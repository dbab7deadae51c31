"""``crasp languages`` (the registry as a table) and ``crasp generate`` (a dataset on disk).

The top-level ``crasp`` group registers both commands and turns a ``CraspError`` into its
message and exit status 2.
"""

from __future__ import annotations

import json
import shlex

import click

from crasp.errors import CraspError
from crasp.languages.datasets import (MAX_STRINGS, build_task, by_distribution, format_bin,
                                     lengths_only, parse_test_bin, parse_test_bins)
from crasp.languages.language import UNIFORM
from crasp.languages.registry import LANGUAGES, get_language
from crasp.languages.storage import FORMATS, dataset_directory, write_task
from crasp.loading import dialect_option
from crasp.util.outputs import DATASET, claim
from crasp.util.tables import format_table

COLUMNS = ("name", "alphabet", "C-RASP-expressible", "recognition depth", "prediction depth",
           "source", "prediction program")


def _depth(value: int | None) -> str:
    return "-" if value is None else str(value)


PROGRAM_KINDS = {"recognition": "program", "prediction": "prediction_program",
                 "prefixes": "prefixes_program"}
"""--which: the Language field of each kind of program."""


@click.command("languages")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per language, with its description and note.")
@click.option("--program", "program_of", metavar="NAME",
              help="Print a language's program instead (the shipped file's text, or the one "
                   "made in code): any L{k} or E{k}, or another built-in language.")
@click.option("--which", type=click.Choice(tuple(PROGRAM_KINDS), case_sensitive=False),
              default="recognition", show_default=True,
              help="With --program: the language's own program, the one that solves its "
                   "prediction task, or the one that accepts the prefixes of its strings, "
                   "where the task is specified (crasp equiv --domain).")
def languages_command(as_json, program_of, which):
    """List the built-in languages: alphabet, whether C-RASP expresses them, the depths of
    recognition and of the prediction task, and where their programs come from ("generated":
    made in code, no file ships); or print one of their programs.

    \b
      crasp languages
      crasp languages --json
      crasp languages --program L9 --which prediction > L9_predict.crasp

    L{k} and E{k} exist for every k >= 1 (E{k}@RATE sets the insertion rate of e); a program
    file PROG.crasp can stand in for a language name anywhere.
    """
    if program_of is not None:
        program = getattr(get_language(program_of), PROGRAM_KINDS[which])
        if program is None:
            raise CraspError(f"{program_of} has no {which} program")
        click.echo(program.source, nl=False)
        return
    if as_json:
        for language in LANGUAGES.values():
            click.echo(json.dumps({
                "name": language.name, "alphabet": list(language.alphabet),
                "expressible": language.expressible,
                "recognition_depth": language.recognition_depth,
                "prediction_depth": language.prediction_depth, "source": language.source,
                "prediction_program": language.prediction_source,
                "prefixes_program": language.prefixes_source,
                "description": language.description, "note": language.note,
                "test_distributions": language.distribution_definitions}))
        return
    rows = [COLUMNS] + [
        (language.name, " ".join(language.alphabet), "yes" if language.expressible else "no",
         _depth(language.recognition_depth), _depth(language.prediction_depth), language.source,
         language.prediction_source)
        for language in LANGUAGES.values()]
    for line in format_table(rows, rule=False):
        click.echo(line)


@click.command("generate")
@click.argument("language", metavar="NAME|PROG.crasp")
@click.option("--bins", required=True,
              help="Length bins LO:HI,... (inclusive). The first is the training bin (split "
                   "into train and validation), the others test bins; see --train-bin. A test "
                   "bin LO:HI@NAME draws from the test distribution NAME (L_k, E_k: uniform, "
                   "skewed, extreme) and is written to OUTPUT/NAME@DISTRIBUTION/.")
@click.option("--n", "n", type=click.IntRange(0, MAX_STRINGS), default=1000, show_default=True,
              help="Strings per bin.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("-o", "--out", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Directory; the dataset goes into OUTPUT/NAME/.")
@click.option("--force", is_flag=True,
              help="Replace a crasp dataset already at OUTPUT/NAME (never anything else).")
@click.option("--format", "fmt", type=click.Choice(FORMATS, case_sensitive=False),
              default="paper", show_default=True,
              help="paper: {lo}_to_{hi}_src.txt / _tgt.txt files; jsonl: one file per split.")
@click.option("--train-bin", help="The training bin LO:HI; then every bin of --bins is a test "
                                  "bin (one equal to it holds fresh strings only).")
@click.option("--val-fraction", type=float, default=0.2, show_default=True,
              help="Share of the training bin's strings held out for validation.")
@click.option("--negatives", type=float, default=0.0, show_default=True,
              help="Share of near-miss negative strings (for the recognition task).")
@click.option("--distinct", is_flag=True,
              help="No duplicate strings inside a split (fails if a bin holds too few).")
@click.option("--strings-from", metavar="NAME",
              help="For a program: draw strings from NAME's generator instead of uniformly "
                   "over the program's alphabet.")
@dialect_option
def generate_command(language, bins, n, seed, output, force, fmt, train_bin, val_fraction,
                     negatives, distinct, strings_from, dialect):
    """Write a length-binned dataset of NAME (or of the program PROG.crasp) with a manifest.

    \b
      crasp generate L8 --bins 201:250,251:300,301:350 --n 1000 --seed 0 -o data
      crasp generate dyck1 --bins 1:50,51:100 --n 1000 -o data --format jsonl
      crasp generate examples/majority.crasp --bins 1:20,21:40 --n 500 -o data

    Labels: one per token, 1 where the prefix up to that token is in the language. The
    manifest (OUTPUT/NAME/manifest.json) records the language, bins, counts, seed and the
    number of duplicate strings in each split.
    """
    if strings_from:
        if "@" in language:
            raise CraspError("give the string source once: PROG.crasp@NAME or --strings-from")
        language = f"{language}@{strings_from}"
    chosen = get_language(language, dialect)
    bin_list = parse_test_bins(bins)
    if train_bin is None:
        training, tests = lengths_only(bin_list[0], bins, "the training bin"), bin_list[1:]
    else:
        training = lengths_only(parse_test_bin(train_bin), train_bin, "the training bin")
        tests = bin_list
    task = build_task(chosen, train_bin=training, test_bins=tests, n_train=n, n_test=n,
                      val_fraction=val_fraction, seed=seed, negative_rate=negatives,
                      distinct=distinct)
    words = ["crasp", "generate", chosen.name, "--bins", bins, "--n", str(n), "--seed", str(seed),
             "-o", str(output), "--format", fmt, "--val-fraction", f"{val_fraction:g}"]
    if train_bin is not None:
        words += ["--train-bin", train_bin]
    if negatives:
        words += ["--negatives", f"{negatives:g}"]
    if distinct:
        words.append("--distinct")
    if dialect != "crasp":
        words += ["--dialect", dialect]
    # The layouts name a test file by its bounds alone, so each distribution's test bins go
    # to their own dataset directory, with the same train and validation splits. Every place is
    # claimed before any is written, so a refused one leaves the others untouched.
    parts = {dataset_directory(output, chosen.name if distribution == UNIFORM
                               else f"{chosen.name}@{distribution}"): part
             for distribution, part in by_distribution(task).items()}
    for directory in parts:
        claim(directory, DATASET, force)
    manifests = [write_task(part, directory, fmt, command=shlex.join(words), force=force)
                 for directory, part in parts.items()]
    for line in format_table([(split.name, format_bin((split.lo, split.hi)),
                               f"{len(split)} strings"
                               + (f", {split.duplicates} duplicates" if split.duplicates else ""))
                              for split in task.splits], rule=False):
        click.echo(line)
    if any(split.duplicates for split in task.splits):
        click.echo("note: duplicates come from short lengths that hold few distinct strings; "
                   "--distinct forbids them", err=True)
    for manifest in manifests:
        click.echo(f"wrote {manifest}")
