"""crasp: a toolkit for C-RASP, the counting RASP language that is equivalent, depth for depth,
to fixed-precision future-masked transformers (Yang, Cadilhac & Chiang, NeurIPS 2025).

The language core (this package) is the pipeline ``parse -> check -> depth / interpret / fmt``;
it never imports torch. ``crasp.compiler``, ``crasp.languages`` and ``crasp.train`` build on it.
The public API is documented in ``docs/api.md``::

    >>> import crasp
    >>> program = crasp.load_program(crasp.example("dyck1"))
    >>> crasp.evaluate(program, ["(())", "())("]).accept.tolist()
    [True, False]
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from crasp import interpret
from crasp.api_inputs import Inputs, token_batch
from crasp.check import DIALECTS, check
from crasp.depth import DepthReport, analyze, depth_of
from crasp.errors import CraspError, InputError, ProgramError
from crasp.fmt import format_program, format_source
from crasp.interpret import Evaluation
from crasp.parse import parse, undecodable_program
from crasp.syntax import Program

__version__ = "0.1.0"
"""The one place of crasp's version (setup.cfg reads it: ``version = attr: crasp.__version__``)."""

__all__ = [
    "CraspError", "DepthReport", "Evaluation", "InputError", "Inputs", "Program", "ProgramError",
    "__version__", "analyze", "depth_of", "evaluate", "example", "format_program",
    "format_source", "format_trace", "load_program", "parse_program", "read_program_text",
    "token_batch",
]

PROGRAM_SUFFIXES = (".crasp", ".cr")
"""The usual suffixes of program files (any file name is read)."""
PROGRAMS_DIR = Path(__file__).parent / "programs"  # package data (importlib.resources: 30 ms)
"""The reference programs, package data of crasp (a plain directory: crasp installs unzipped)."""


def parse_program(text: str, filename: str = "<string>", extra_alphabet: Sequence[str] = (),
                  dialect: str = "crasp", count_answer: bool = False) -> Program:
    """Parse and type-check C-RASP source text; errors name ``filename:line:col``.

    ``extra_alphabet`` adds tokens that no literal in the program mentions.
    ``dialect="crasp"`` (the default) reads the conventional precedence; ``dialect="hahn"``
    reads the text exactly as Hahn's interpreter does (``crasp.hahn_parse``): his precedence,
    redefinitions, predicate names free until imported, token literals that equal no input
    token (``""``, ``"a b"``) read as false, and, with ``count_answer``, a count as the last
    line (his interpreter prints its value).

    >>> program = parse_program('alphabet "a" "b"\\nmore_a = #"a" > #"b"')
    >>> program.alphabet, [d.name for d in program.definitions]
    (('a', 'b'), ['more_a'])
    """
    from crasp import hahn, hahn_parse

    if dialect not in DIALECTS:
        raise CraspError(f"unknown dialect {dialect!r} (expected one of {', '.join(DIALECTS)})")
    if dialect == "hahn":
        return check(hahn_parse.parse(text, filename), tuple(extra_alphabet), dialect="hahn",
                     count_answer=count_answer)
    parsed = None
    try:
        parsed = parse(text, filename)
        return check(parsed, tuple(extra_alphabet))
    except ProgramError as error:
        try:
            check(hahn_parse.parse(text, filename), tuple(extra_alphabet), dialect="hahn")
            checks_as_hahn = True
        except ProgramError:
            checks_as_hahn = False
        raise hahn.explain_failure(error, parsed, checks_as_hahn) from None


MAX_PROGRAM_BYTES = 1 << 30
"""A program file larger than this is refused before it is read (a 10 MB program parses)."""


def read_program_text(path: str | Path) -> str:
    """The UTF-8 text of a program file (a byte-order mark is dropped by the parsers). Only a
    regular file is read (a FIFO or a link to a device would block or never end: read such
    input through ``-``, standard input), and only up to ``MAX_PROGRAM_BYTES``."""
    from crasp.util.safe_read import SafeReadError, read_bytes_file

    path = Path(path)
    try:
        data = read_bytes_file(path, MAX_PROGRAM_BYTES)
    except SafeReadError as error:
        raise CraspError(f"cannot read program {str(path)!r}: {error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise undecodable_program(data, error, str(path)) from None


def load_program(path: str | Path, extra_alphabet: Sequence[str] = (),
                 dialect: str = "crasp", count_answer: bool = False) -> Program:
    """Read, parse and type-check a C-RASP program file (any name; see ``parse_program``).

    >>> load_program(example("majority")).definitions[-1].name
    'majority'
    """
    return parse_program(read_program_text(path), str(path), extra_alphabet, dialect,
                         count_answer)


def example(name: str) -> Path:
    """The reference program ``name`` that ships with crasp (package data; ``crasp languages``
    lists them), e.g. ``"dyck1"``, ``"L5_predict"``.

    >>> example("dyck1").name
    'dyck1.crasp'
    """
    path = PROGRAMS_DIR / f"{name}.crasp"
    if not path.exists():
        raise CraspError(f"no shipped program {name!r}; crasp ships "
                         f"{', '.join(sorted(p.stem for p in path.parent.glob('*.crasp')))}")
    return path


def evaluate(program: Program, inputs: Inputs, strict_alphabet: bool = False) -> Evaluation:
    """The value of every definition at every position of every input (see ``Evaluation``).

    ``inputs`` is one string, a list of strings, or a list of token lists, read as ``crasp run``
    reads its arguments (``crasp.api_inputs``). A token outside the alphabet is read as Hahn's
    interpreter reads it (every token test is false there); ``strict_alphabet=True`` raises
    ``InputError`` instead, as ``crasp run --strict-alphabet`` does.

    >>> program = load_program(example("dyck1"))
    >>> result = evaluate(program, "( ( ) )")
    >>> bool(result.accept[0]), result.trace["C_open"][0].tolist()
    (True, [1, 2, 2, 2])
    """
    return interpret.evaluate(program, token_batch(inputs, program.alphabet), strict_alphabet)


def format_trace(program: Program, inputs: Inputs, html: bool = False) -> str:
    """Every definition at every position of every input, as the text ``crasp run --trace``
    prints (or, with ``html``, the page ``--trace FILE.html`` writes).

    >>> print(format_trace(load_program(example("majority")), "ab").splitlines()[1])
    input 1: accept = False
    """
    batch = token_batch(inputs, program.alphabet)
    from crasp import trace  # html and the output places: only for traces

    evaluation = interpret.evaluate(program, batch)
    return (trace.format_html if html else trace.format_text)(evaluation, batch)
