"""The ``crasp`` command line.

The core commands (run, depth-check, fmt) live here; the commands of the subpackages are
imported only when used, so ``crasp run`` never loads torch. Every ``CraspError`` becomes its
rendered message on stderr and exit status 2, with no traceback.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
from typing import Callable, Iterable

import click
import numpy as np

import crasp
from crasp.util.code_fingerprint import code_fingerprint
from crasp.util.atomic import rewrite_in_place
from crasp.errors import CraspError, in_words
from crasp.util.inputs import MAX_LINE_BYTES, line_groups, read_lines, tokenize
from crasp.loading import (STDIN_NAME, dialect_option, load_program_argument, split_tokens,
                           utf8_arguments)
from crasp.util.outputs import OutputError, writing
from crasp.util.progress import progress_option, wants_progress
from crasp.util.standard_output import checked_standard_output
from crasp.util.tables import format_table
from crasp.verify.cli import prove_equivalence, prove_option

LAZY_COMMANDS = {  # name -> (module:attribute, one-line help shown without importing it)
    "compile": ("crasp.compiler.cli:compile_command",
                "Compile a program to the weights of an equivalent transformer."),
    "decompile": ("crasp.decompile.cli:decompile_command",
                  "Turn a fixed-precision transformer into a C-RASP program of the same depth."),
    "extract": ("crasp.train.extract_cli:extract_command",
                "Quantize a trained float run and decompile it, with its fidelity measured."),
    "equiv": ("crasp.verify.cli:equiv_command",
              "Decide whether two programs answer the same on every string up to a length."),
    "check": ("crasp.verify.cli:check_command",
              "Decide whether a program's language is empty, universal or includes another's."),
    "languages": ("crasp.languages.cli:languages_command",
                  "List the built-in languages, their depths and reference programs."),
    "generate": ("crasp.languages.cli:generate_command",
                 "Write a length-binned dataset of a language or program."),
    "train": ("crasp.train.cli:train_command",
              "Train a causal transformer of a chosen depth on a language."),
    "sweep": ("crasp.train.sweep.cli:sweep_command",
              "Run a grid of training runs (depth x language x encoding x seed)."),
    "report": ("crasp.train.report.cli:report_command", "Tabulate and plot a sweep directory."),
    "export": ("crasp.export.cli:export_command",
               "Write a model as an ONNX graph, for TransformerLens or Hugging Face."),
    "zoo": ("crasp.zoo.cli:zoo_command",
            "Build, check or score a collection of compiled models with ground-truth circuits."),
    "eval": ("crasp.train.evaluate:eval_command",
             "Score a compiled or trained model on a language's test bins."),
    "analyze": ("crasp.train.analysis.cli:analyze_command",
                "Ablate heads, layers and paths of a trained run; effective depth; Hessian."),
}

STDIN_BATCH = 4096
BATCH_CELLS = 1 << 22
"""At most this many [input x position] cells per evaluated batch: memory stays bounded when
long and short lines arrive together."""
GC_THRESHOLD = 100_000


class CraspGroup(click.Group):
    """Adds the lazily imported commands and turns ``CraspError`` into exit status 2."""

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None and name in LAZY_COMMANDS:
            module, attribute = LAZY_COMMANDS[name][0].split(":")
            command = getattr(importlib.import_module(module), attribute)
        return command

    def format_commands(self, ctx, formatter):
        rows = [(name, command.get_short_help_str(70))
                for name, command in self.commands.items()]
        rows += [(name, short_help) for name, (_, short_help) in LAZY_COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(sorted(rows))

    def main(self, *args, standalone_mode: bool = True, **kwargs):
        """Also what click prints before a command runs (--help, --version) must arrive."""
        try:
            with checked_standard_output():
                return super().main(*args, standalone_mode=standalone_mode, **kwargs)
        except OutputError as error:
            click.echo(error.render(), err=True)
            if standalone_mode:
                sys.exit(error.exit_code)
            return error.exit_code

    def invoke(self, ctx):
        try:
            with checked_standard_output():
                return super().invoke(ctx)
        except CraspError as error:
            click.echo(error.render(), err=True)
            ctx.exit(error.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except RecursionError:  # a pass that still recurses, on a program nested too deeply
            click.echo("error: the program nests expressions too deeply for crasp to process "
                       "(Python's recursion limit); split it into more definitions", err=True)
            ctx.exit(CraspError.exit_code)
        except OSError as error:  # a writer not yet wrapped by crasp.util.outputs.writing
            click.echo(in_words(error), err=True)
            ctx.exit(CraspError.exit_code)


def print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: the release and the fingerprint of the running code (a checkout between
    releases is told apart by the latter)."""
    if value and not ctx.resilient_parsing:
        click.echo(f"crasp, version {crasp.__version__} (code {code_fingerprint()})")
        ctx.exit()


@click.group(cls=CraspGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=print_version,
              help="Show the version and the running code's fingerprint, and exit.")
def cli():
    """C-RASP toolkit: run programs, measure their depth, compile them to transformers, and
    train transformers of a given depth on counting languages."""
    # A program's syntax trees are many small acyclic objects: with the default threshold the
    # collector rescans them hundreds of times while a large program is parsed (50,000
    # definitions: 11.8 s instead of 4.6 s); collecting less often costs little memory.
    gc.set_threshold(GC_THRESHOLD, 50, 100)


Evaluator = Callable[[list[list[str]], int], tuple[np.ndarray, np.ndarray]]
"""(a batch of token lists, the number of its first input) -> (accept, output)."""


def _answers(evaluation: crasp.Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """(the answer at each input's end, at each position): Booleans, or the counts of a count
    answer (``--dialect hahn``, whose last line may be a count: Hahn prints its value)."""
    if evaluation.program.answer.type == crasp.syntax.COUNT:
        return evaluation.answer_at_end, evaluation.trace[evaluation.program.answer.name]
    return evaluation.accept, evaluation.output


def _interpreter(program: crasp.Program, strict_alphabet: bool) -> Evaluator:
    def evaluate(inputs, first_number):
        return _answers(crasp.interpret.evaluate(program, inputs, strict_alphabet, first_number))
    return evaluate


def _compiled(model_dir: str, strict_alphabet: bool
              ) -> tuple[Evaluator, tuple[str, ...], int | None]:
    """The model's evaluator, its vocabulary, and the longest input it reads (None: any)."""
    from crasp.models import load_model

    model = load_model(model_dir, "run --model")
    vocabulary = crasp.Program((), model.vocab)

    def evaluate(inputs, first_number):
        if strict_alphabet:   # the interpreter's error for a token outside the vocabulary
            crasp.interpret.encode_flat(vocabulary, inputs, True, first_number)
        crasp.api_inputs.check_lengths(model.executable, inputs, first_number)
        evaluation = model.predict(inputs)
        return evaluation.accept, evaluation.output
    return evaluate, model.vocab, getattr(model.executable, "max_tokens", None)


def _batches(items: list[tuple[str, list[str]]]) -> Iterable[list[tuple[str, list[str]]]]:
    """``items`` in order, cut into batches of at most ``STDIN_BATCH`` inputs whose padded
    [inputs x longest] array stays within ``BATCH_CELLS`` (one long line is a batch alone)."""
    batch: list[tuple[str, list[str]]] = []
    longest = 0
    for item in items:
        width = max(longest, len(item[1]) + 1)
        if batch and (len(batch) == STDIN_BATCH or (len(batch) + 1) * width > BATCH_CELLS):
            yield batch
            batch, width = [], len(item[1]) + 1
        batch.append(item)
        longest = width
    if batch:
        yield batch


def _report(batch: list[tuple[str, list[str]]], first_id: int, evaluate: Evaluator,
            as_json: bool, refuses: Callable[[list[str]], bool] | None = None) -> None:
    """Print one line per input of ``batch``, in one write (and flush). With ``refuses`` (a
    token outside a strict alphabet, an input longer than a model reads), the inputs before
    the first it refuses are answered, and that one then refused by ``evaluate``. A count
    answer (``--dialect hahn``) prints its value, as Hahn's interpreter does; ``--json`` gives
    it as "count"."""
    if refuses is not None:
        refused = next((offset for offset, (_, tokens) in enumerate(batch)
                        if refuses(tokens)), None)
        if refused is not None:
            _report(batch[:refused], first_id, evaluate, as_json)
            evaluate([batch[refused][1]], first_id + refused)  # raises the InputError
    if not batch:
        return
    accept, output = evaluate([tokens for _, tokens in batch], first_id)
    value, key = (bool, "accept") if accept.dtype == bool else (int, "count")
    lines = []
    for offset, (shown, tokens) in enumerate(batch):
        input_id = first_id + offset
        if as_json:
            lines.append(json.dumps({
                "id": input_id, "tokens": tokens, key: value(accept[offset]),
                "output": [value(v) for v in output[offset, :len(tokens)]],
            }))
        else:
            lines.append(f"{input_id} {shown}: {value(accept[offset])}")
    click.echo("\n".join(lines))


@cli.command("run")
@click.argument("args", nargs=-1)
@click.option("--model", "model_dir", type=click.Path(),
              help="Run a compiled model directory instead of a program; then every argument "
                   "is a token.")
@click.option("--json", "as_json", is_flag=True,
              help='One JSON object per input: {"id", "tokens", "accept", "output"}.')
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False),
              help="Write every definition's per-position values to FILE.txt or FILE.html.")
@click.option("--force", is_flag=True, help="--trace: replace an earlier crasp trace FILE.")
@click.option("--alphabet", "extra_alphabet", multiple=True,
              help="Extra tokens (space-separated) for the alphabet of a program that declares "
                   "none.")
@click.option("--strict-alphabet", is_flag=True,
              help="Reject an input token outside the alphabet (by default it is read as Hahn's "
                   "interpreter does: every token test is false there).")
@click.option("--max-line-bytes", type=click.IntRange(min=1), default=MAX_LINE_BYTES,
              show_default=True,
              help="Refuse a line of standard input longer than this many bytes (memory grows "
                   "with a line's length).")
@dialect_option
def run_command(args, model_dir, as_json, trace_path, force, extra_alphabet, strict_alphabet,
                max_line_bytes, dialect):
    """Run PROG (a program file, or - for stdin) on TOKENS, or on every line of stdin.

    \b
      crasp run examples/dyck1.crasp "( ( ) )"
      crasp run examples/majority.crasp aab
      printf 'ab\\naab\\n' | crasp run examples/majority.crasp --json
      crasp run --model dyck1.model "( )"

    Prints Hahn-compatible lines "ID INPUT: True|False" (the answer at the last position;
    with --dialect hahn a last line that is a count prints its value, as Hahn's interpreter
    does, and --json gives it as "count" instead of "accept").
    Inputs with spaces are token lists; inputs without are split into characters when every
    symbol of the alphabet is one character (with --dialect hahn, as in Hahn's interpreter,
    they are one token). An empty argument is the empty input. Standard input is answered
    line by line as it arrives (a pipe filter); LF, CRLF and a lone CR end a line, and a
    byte-order mark at the start of a line is dropped.
    """
    if trace_path == "":
        raise click.BadParameter("needs a file name (.html or .htm for a page, anything else "
                                 "for text)", param_hint="--trace")
    if model_dir is not None:
        if trace_path:
            raise CraspError("--trace needs a program: traces show definitions, which a "
                             "compiled model does not keep")
        evaluate, alphabet, max_tokens = _compiled(model_dir, strict_alphabet)
        token_args = list(args)
        program = None
    else:
        if not args:
            raise click.UsageError("missing PROG (a .crasp file), or --model DIR")
        program = load_program_argument(args[0], split_tokens(extra_alphabet), dialect,
                                        count_answer=True)
        evaluate, alphabet = _interpreter(program, strict_alphabet), program.alphabet
        max_tokens = None
        token_args = list(args[1:])
    split_characters = dialect != "hahn"   # his interpreter splits inputs on whitespace only
    if token_args:
        shown = " ".join(utf8_arguments(token_args, "the input tokens"))
        groups: Iterable[list] = [[(shown, tokenize(shown, alphabet, split_characters))]]
    elif args and args[0] == STDIN_NAME and model_dir is None:
        raise click.UsageError("the program was read from stdin (-), so give the input tokens "
                               "as arguments")
    else:
        stdin = getattr(sys.stdin, "buffer", None)  # None: standard input is closed
        groups = (list(read_lines(lines, alphabet, split_characters))
                  for lines in line_groups(stdin, max_line_bytes))
    if trace_path:
        collected = [item for group in groups for item in group]
        token_lists = [tokens for _, tokens in collected]
        evaluation = crasp.evaluate(program, token_lists, strict_alphabet)
        from crasp.trace import write_trace

        write_trace(trace_path, evaluation, token_lists, force)
        _report(collected, 1, lambda *_: _answers(evaluation), as_json)
        click.echo(f"Trace written to {trace_path}", err=True)
        return
    known = frozenset(alphabet) if strict_alphabet else None
    refuses = (None if known is None and max_tokens is None else
               lambda tokens: ((known is not None and not known.issuperset(tokens))
                               or (max_tokens is not None and len(tokens) > max_tokens)))
    next_id = 1
    for group in groups:
        for batch in _batches(group):
            _report(batch, next_id, evaluate, as_json, refuses)
            next_id += len(batch)


def _depth_table(report: crasp.depth.DepthReport) -> str:
    """Every definition's depth; a column of the TL[◁#]^pos depth where it differs anywhere."""
    local = any(d.tl_pos_depth != d.depth for d in report.definitions)
    rows = [("name", "type", "depth", *(("TL^pos",) if local else ()), "line", "")] + [
        (d.name, d.type, str(d.depth), *((str(d.tl_pos_depth),) if local else ()),
         str(d.line or ""), "" if d.used else "unused")
        for d in report.definitions
    ]
    return "\n".join(format_table(rows))


def verification_options(command):
    """--max-length, --random-length, --random-count, --seed and --progress: what --verify runs
    (shared by depth-check and decompile)."""
    for option in reversed([
        click.option("--max-length", type=click.IntRange(min=0), default=8, show_default=True,
                     help="--verify: every string up to this length."),
        click.option("--random-length", type=click.IntRange(min=1), default=2000,
                     show_default=True, help="--verify: random strings up to this length."),
        click.option("--random-count", type=click.IntRange(min=0), default=64,
                     show_default=True, help="--verify: how many random strings."),
        click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="--verify: random seed."), progress_option]):
        command = option(command)
    return command


@cli.command("depth-check")
@click.argument("program_path", metavar="PROG")
@click.option("--max-depth", type=click.IntRange(min=0), default=None,
              help="Budget: exit 1 when the program's depth exceeds K.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--verify", is_flag=True,
              help="Also compile the program and compare the model with the interpreter.")
@verification_options
@click.option("--alphabet", "extra_alphabet", multiple=True,
              help="Extra tokens (space-separated) for the alphabet of a program that declares "
                   "none (--verify then also tries strings with them).")
@dialect_option
def depth_check_command(program_path, max_depth, as_json, verify, max_length, random_length,
                        random_count, seed, progress, extra_alphabet, dialect):
    """Report the counting depth of every definition of PROG and of the program.

    \b
      crasp depth-check examples/L5_predict.crasp --max-depth 3
      crasp depth-check examples/dyck1.crasp --verify --json

    A token test or constant has depth 0, each count adds one level, everything else takes
    the maximum of its operands; the program's depth is its answer's (the compiled model's
    layer count). Also printed: Knee-Deep's TL[◁#]^pos depth, where a local relation
    (#[offset(c)] P) adds no level. Exit status 1 when the depth exceeds --max-depth or when
    --verify finds a disagreement.
    """
    program = load_program_argument(program_path, split_tokens(extra_alphabet), dialect)
    report = crasp.analyze(program)
    result = report.as_dict()
    failed = False
    if max_depth is not None:
        result["max_depth"] = max_depth
        result["within_budget"] = report.depth <= max_depth
        failed |= not result["within_budget"]
    verification = None
    if verify:
        from crasp import compiler

        verification = compiler.verify(program, max_exhaustive_length=max_length,
                                       max_random_length=random_length, n_random=random_count,
                                       seed=seed, progress=wants_progress(progress))
        result["verify"] = {"ok": verification.ok,
                            "checked_strings": verification.checked_strings,
                            "counterexample": verification.counterexample,
                            "message": verification.describe()}
        failed |= not verification.ok
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(_depth_table(report))
        click.echo(f"\nprogram depth: {report.depth} (answer: {program.answer.name})")
        click.echo("critical path: " + " <- ".join(report.critical_path))
        click.echo(f"TL[◁#]^pos depth: {report.tl_pos_depth} (Knee-Deep App. E/F: local relations"
                   f" are the depth-free Y; mod adds no depth in either measure)")
        click.echo("TL[◁#]^pos critical path: " + " <- ".join(report.tl_pos_critical_path))
        click.echo("unused: " + (", ".join(report.unused) or "none"))
        if max_depth is not None:
            verdict = "within" if result["within_budget"] else "EXCEEDS"
            click.echo(f"budget: depth {report.depth} {verdict} the budget of {max_depth}")
        if verification is not None:
            status = "verified" if verification.ok else "MISMATCH"
            click.echo(f"{status}: {verification.describe()}")
    sys.exit(1 if failed else 0)


@cli.command("fmt")
@click.argument("program_path", metavar="PROG")
@click.option("--write", "-w", is_flag=True,
              help="Rewrite PROG in place: through a symbolic link, into the same file (hard "
                   "links and the mode stay); a failed write puts the old text back.")
@prove_option
@dialect_option
def fmt_command(program_path, write, prove_length, dialect):
    """Print PROG in canonical form, keeping its comments and blank lines.

    The output means the same under crasp's and Hahn's parsers (parentheses wherever their
    readings would differ) and is a fixed point of fmt. With --dialect hahn, PROG is read as
    Hahn's interpreter reads it and rewritten as conventional text with the same meaning (a
    redefined name x becomes x_2 from its redefinition on, a definition named mod or offset
    mod_2 or offset_2, a token literal that no input token equals, such as "" or "a b",
    false); a note on stderr names each such change.

    \b
      crasp fmt examples/anbncn.crasp
      crasp fmt -w my_program.crasp
      crasp fmt --dialect hahn his_program.cr --prove

    --prove [N] reads the printed text back (in the conventional dialect) and checks with
    crasp equiv that it answers as PROG (read in --dialect) on every string of length ≤ N;
    exit status 1, and nothing written, if not.
    """
    if write and program_path == STDIN_NAME:
        raise click.UsageError("--write needs a file, not - (stdin)")
    program = load_program_argument(program_path, dialect=dialect)
    text = crasp.format_source(program)
    for line, rewrite in program.rewrites:   # Hahn's reading in crasp's dialect: say what changed
        click.echo(f"{program.filename}:{line}: note: {rewrite}", err=True)
    if prove_length is not None:
        printed = crasp.parse_program(text, f"{program.filename} (formatted)")
        if not prove_equivalence(program, printed, prove_length, "fmt --prove"):
            sys.exit(1)
    if write:  # through a symbolic link, into the same file: links and mode stay
        with writing(program_path, "formatted program"):
            rewrite_in_place(program_path, text.encode("utf-8"))
    else:
        click.echo(text, nl=False)


def main() -> None:
    cli(prog_name="crasp")


if __name__ == "__main__":
    main()
