"""``crasp equiv A B`` and ``crasp check PROG --empty | --universal | --prefix-closed |
--includes OTHER | --recognizes NAME | --solves NAME``, and
``prove_equivalence``, the ``--prove`` of ``compile``, ``decompile`` and ``fmt``.

``crasp/cli.py`` imports this module lazily; z3 is imported only when a search needs it
(``crasp.verify.solver``). Exit status: 0 yes (up to N, or proved), 1 a counterexample,
2 an error, 3 unknown (``--unbounded`` found neither a proof nor a counterexample, or the
search was left undecided: ``--timeout`` ran out, z3 ran out of ``--max-memory``, or z3
answered unknown).
"""

from __future__ import annotations

import json
import sys

import click

from crasp import parse_program, syntax
from crasp.errors import CraspError
from crasp.loading import STDIN_NAME, dialect_option, load_program_argument, split_tokens
from crasp.util.progress import progress_bar, progress_option, wants_progress
from crasp.verify.driver import METHODS, decide
from crasp.verify.questions import Question
from crasp.verify.report import as_json, exit_status, format_text
from crasp.verify.solver import LARGEST_MEMORY_BUDGET, default_memory_budget

DEFAULT_MAX_LENGTH = 20


def question_options(command):
    """--max-length, --alphabet, --domain, --method, --unbounded, --deepen, --timeout,
    --max-memory, --json, --progress (shared by equiv and check)."""
    for option in reversed([
        click.option("--max-length", type=click.IntRange(min=0), default=DEFAULT_MAX_LENGTH,
                     show_default=True, metavar="N",
                     help="Every string of length up to N (and, with --unbounded, the base "
                          "case of the induction)."),
        click.option("--alphabet", "alphabet", multiple=True,
                     help="The tokens strings are made of (space-separated; default: every "
                          "token the programs mention plus one foreign token)."),
        click.option("--domain", metavar="PROG",
                     help="Ask only about the strings program PROG accepts (at each position, "
                          "the prefix up to it), for example the prefixes of a language's "
                          "strings, where its prediction task says what to answer "
                          "(crasp languages --program NAME --which prefixes prints them; "
                          "crasp check --solves NAME uses them)."),
        click.option("--method", type=click.Choice(METHODS, case_sensitive=False),
                     default="auto", show_default=True,
                     help="smt: z3 on a linear integer arithmetic encoding; enumerate: the "
                          "interpreter on every string; auto: enumerate when there are few "
                          "strings."),
        click.option("--unbounded", is_flag=True,
                     help="Also try to prove the answer for every length (k-induction); "
                          "answers proved, counterexample or unknown (exit status 3)."),
        click.option("--deepen", type=click.IntRange(min=0), default=None, metavar="N",
                     help="With --unbounded, where the induction neither proves nor refutes: "
                          "search every string up to length N for a counterexample before "
                          "answering unknown (default: 4 x --max-length, at most 64; 0: no "
                          "such search)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
                     metavar="SECONDS",
                     help="Give up after SECONDS (the solver's calls and the enumeration "
                          "together; default: no limit) and answer unknown (exit status 3), "
                          "with the reason."),
        click.option("--max-memory", type=click.IntRange(0, LARGEST_MEMORY_BUDGET), default=None,
                     metavar="MB",
                     help="Let z3 allocate at most MB megabytes (its terms and solver state; "
                          "default: half of the memory this process may use; 0: no limit); "
                          "past it, answer unknown (exit status 3), with the reason. "
                          "Enumeration uses no solver."),
        click.option("--json", "as_json_flag", is_flag=True,
                     help='Print the verdict as JSON: {"question", "programs", "result", '
                          '"counterexample", "method", ...}.'),
        progress_option]):
        command = option(command)
    return command


def _ask(kind: str, paths: list[str], labels: tuple[str, ...], domain: str | None,
         dialect: str) -> Question:
    """The question about the programs at ``paths`` (and the domain's), each read once."""
    every = paths + ([domain] if domain is not None else [])
    if sum(path == STDIN_NAME for path in every) > 1:
        raise click.UsageError("only one program can be read from stdin (-)")
    programs = [load_program_argument(path, dialect=dialect) for path in every]
    return Question(kind, tuple(programs[:len(paths)]), labels,
                    programs[-1] if domain is not None else None)


class _StageBar:
    """A progress bar per stage of the searches (``crasp.verify.solver.Progress``: the lengths
    z3 has searched, the lemmas' positions, the induction's depths, the strings run), on
    stderr, each removed when the next begins."""

    def __init__(self):
        self.bar, self.stage = None, None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            self.bar, self.stage = progress_bar(total=total, desc=stage, leave=False), stage
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar = self.stage = None


def _decide_with_bar(question: Question, max_length: int, alphabet, progress: bool | None,
                     max_memory: int | None = None, **options):
    """``decide``, with a ``_StageBar`` on stderr where ``progress`` (--progress; None: when
    stderr is a terminal) asks for one, under the commands' memory budget: ``max_memory``
    as --max-memory reads it (None: ``default_memory_budget``; 0: none)."""
    if max_memory is None:
        max_memory = default_memory_budget()
    bar = _StageBar() if wants_progress(progress) else None
    try:
        return decide(question, max_length, alphabet, progress=bar,
                      max_memory=max_memory or None, **options)
    finally:
        if bar is not None:
            bar.close()


def _answer(question: Question, max_length, alphabet, method, unbounded, deepen, timeout,
            max_memory, as_json_flag, progress):
    tokens = split_tokens(alphabet) if alphabet else None   # given but blank: an error
    verdict = _decide_with_bar(question, max_length, tokens, progress, max_memory,
                               method=method, unbounded=unbounded, timeout=timeout,
                               deepen=deepen)
    click.echo(json.dumps(as_json(verdict), indent=2) if as_json_flag else format_text(verdict))
    sys.exit(exit_status(verdict))


@click.command("equiv")
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@question_options
@dialect_option
def equiv_command(first, second, max_length, alphabet, domain, method, unbounded, deepen,
                  timeout, max_memory, as_json_flag, progress, dialect):
    """Decide whether programs A and B give the same answer at every position of every
    string up to length N (and, with --unbounded, of every length).

    \b
      crasp equiv examples/majority.crasp rewritten.crasp --max-length 30
      crasp equiv A.crasp B.crasp --unbounded --alphabet "a b"
      crasp equiv model.crasp examples/L5_predict.crasp --domain examples/L5_prefixes.crasp

    Exit status 0: equivalent for every string of length ≤ N (or proved); 1: a shortest
    counterexample (the string, its last position, both answers and the first definitions
    that differ); 3: unknown (--unbounded could not decide, --timeout ran out, or z3 ran
    out of --max-memory); 2: an error. With --domain, only the strings that the --domain
    program accepts are compared.
    """
    question = _ask("equivalent", [first, second], ("A", "B"), domain, dialect)
    _answer(question, max_length, alphabet, method, unbounded, deepen, timeout, max_memory,
            as_json_flag, progress)


@click.command("check")
@click.argument("program_path", metavar="PROG")
@click.option("--empty", "kind", flag_value="empty", help="Does PROG accept no string?")
@click.option("--universal", "kind", flag_value="universal",
              help="Does PROG accept every string?")
@click.option("--prefix-closed", "kind", flag_value="prefix-closed",
              help="Does PROG accept every nonempty prefix of every string it accepts (a "
                   "--domain the searches can assume everywhere)?")
@click.option("--includes", "other", metavar="OTHER",
              help="Does PROG accept every string that program OTHER accepts?")
@click.option("--recognizes", metavar="NAME",
              help="Does PROG accept exactly the strings of the built-in language NAME (crasp "
                   "languages): is it equivalent to NAME's program on every string?")
@click.option("--solves", metavar="NAME",
              help="Does PROG solve language NAME's prediction task: does it answer as NAME's "
                   "prediction program on every nonempty prefix of NAME's strings (the domain "
                   "is NAME's prefixes program)?")
@question_options
@dialect_option
def check_command(program_path, kind, other, recognizes, solves, max_length, alphabet, domain,
                  method, unbounded, deepen, timeout, max_memory, as_json_flag, progress,
                  dialect):
    """Decide a question about PROG's language (the strings it accepts: its answer at their
    last position) for every string up to length N, with a witness string when the answer
    is no.

    \b
      crasp check examples/anbncn.crasp --empty
      crasp check examples/dyck1.crasp --universal --max-length 12
      crasp check examples/majority.crasp --includes examples/L1.crasp --unbounded
      crasp check decompiled.crasp --solves L5 --unbounded

    Exit status 0: yes; 1: no (with a shortest witness); 3: unknown (--unbounded could not
    decide, --timeout ran out, or z3 ran out of --max-memory); 2: an error. With --domain,
    the question is asked of the strings that the --domain program accepts (--universal:
    does PROG accept every one of them). --recognizes and --solves compare PROG with a
    built-in language's programs (the texts crasp languages --program NAME --which
    recognition|prediction|prefixes prints).
    """
    given = [kind, other, recognizes, solves]
    if sum(choice is not None for choice in given) != 1:
        raise click.UsageError("give exactly one of --empty, --universal, --includes OTHER, "
                               "--prefix-closed, --recognizes NAME, --solves NAME")
    if solves is not None and domain is not None:
        raise click.UsageError("--solves NAME asks about NAME's prefixes, its own domain: "
                               "leave out --domain")
    if recognizes is not None or solves is not None:
        question = _language_question(program_path, recognizes, solves, domain, dialect)
    else:
        paths = [program_path] + ([other] if other is not None else [])
        question = _ask(kind or "includes", paths, ("PROG", "OTHER")[:len(paths)], domain,
                        dialect)
    _answer(question, max_length, alphabet, method, unbounded, deepen, timeout, max_memory,
            as_json_flag, progress)


def _language_question(program_path: str, recognizes: str | None, solves: str | None,
                       domain: str | None, dialect: str) -> Question:
    """PROG against a built-in language: its program on every string (``recognizes``), or
    its prediction program on its prefixes (``solves``, Knee-Deep def:prediction_task)."""
    from crasp.languages import get_language   # the languages only where a question names one
    language = get_language(recognizes if recognizes is not None else solves)
    wanted = ({"program": language.program} if solves is None else
              {"prediction program": language.prediction_program,
               "prefixes program": language.prefixes_program})
    programs = []
    for kind, reference in wanted.items():
        if reference is None:
            raise CraspError(f"{language.name} has no {kind}: crasp languages lists what each "
                             "language has")
        programs.append(parse_program(reference.source, f"{language.name}'s {kind}"))
    question = _ask("equivalent", [program_path], ("PROG",), domain, dialect)
    return Question("equivalent", question.programs + (programs[0],), ("PROG", language.name),
                    programs[1] if solves is not None else question.domain)


PROVE_DEFAULT = 12
PROVE_LIMIT = 1_000
"""The longest --prove N: the proof has no time limit, and z3's search unrolls N positions (an
astronomical N grew without end, gigabytes within minutes); ``crasp equiv --timeout`` goes
further under a limit."""


def prove_option(command):
    """``--prove [N]``: check that what a command produced is equivalent to its input, for every
    string of length ≤ N (default ``PROVE_DEFAULT``, at most ``PROVE_LIMIT``)."""
    return click.option("--prove", "prove_length", type=click.IntRange(0, PROVE_LIMIT),
                        default=None, is_flag=False, flag_value=PROVE_DEFAULT, metavar="[N]",
                        help="Also prove that the result is equivalent to the input for every "
                             f"string of length ≤ N (default {PROVE_DEFAULT}, at most "
                             f"{PROVE_LIMIT:,}; crasp equiv --timeout for longer), as crasp "
                             "equiv does; exit status 1 if it is not (or z3 leaves it "
                             "unknown). Put it after PROG, or write --prove=N.")(command)


def prove_equivalence(original: syntax.Program, result: syntax.Program,
                      max_length: int, what: str, alphabet: tuple[str, ...] | None = None
                      ) -> bool:
    """Run equiv between ``original`` and ``result`` (over ``alphabet``; default: their tokens
    and a foreign one); print the verdict on stderr, each line prefixed with ``what`` (for
    example "compile --prove"). True when they are equivalent for every string of length ≤
    ``max_length`` (not when z3 leaves that ``unknown``, or runs out of the commands' default
    memory budget, ``default_memory_budget``). A progress bar shows on stderr when it is a
    terminal."""
    verdict = _decide_with_bar(Question("equivalent", (original, result), ("input", "output")),
                               max_length, alphabet, None)
    for line in format_text(verdict).splitlines():
        click.echo(f"{what}: {line}", err=True)
    return verdict.outcome == "holds"
