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
from crasp import trace as _trace
from crasp.api_inputs import Inputs, token_batch
from crasp.check import check
from crasp.depth import DepthReport, analyze, depth_of
from crasp.errors import CraspError, InputError, ProgramError
from crasp.fmt import format_program
from crasp.interpret import Evaluation
from crasp.parse import parse
from crasp.syntax import Program

__version__ = "0.1.0"
"""The one place of crasp's version (setup.cfg reads it: ``version = attr: crasp.__version__``)."""

__all__ = [
    "CraspError", "DepthReport", "Evaluation", "InputError", "Inputs", "Program", "ProgramError",
    "__version__", "analyze", "depth_of", "evaluate", "example", "format_program", "format_trace",
    "load_program", "parse_program", "token_batch",
]

PROGRAM_SUFFIXES = (".crasp", ".cr")


def parse_program(text: str, filename: str = "<string>",
                  extra_alphabet: Sequence[str] = ()) -> Program:
    """Parse and type-check C-RASP source text; errors name ``filename:line:col``.

    ``extra_alphabet`` adds tokens that no literal in the program mentions.

    >>> program = parse_program('alphabet "a" "b"\\nmore_a = #"a" > #"b"')
    >>> program.alphabet, [d.name for d in program.definitions]
    (('a', 'b'), ['more_a'])
    """
    return check(parse(text, filename), tuple(extra_alphabet))


def load_program(path: str | Path, extra_alphabet: Sequence[str] = ()) -> Program:
    """Read, parse and type-check a C-RASP program file (``.crasp`` or ``.cr``).

    >>> load_program(example("majority")).definitions[-1].name
    'majority'
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CraspError(f"cannot read program {str(path)!r}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CraspError(f"program {str(path)!r} is not UTF-8 text") from None
    return parse_program(text, str(path), extra_alphabet)


def example(name: str) -> Path:
    """The reference program ``name`` that ships with crasp (package data; ``crasp languages``
    lists them), e.g. ``"dyck1"``, ``"L5_predict"``.

    >>> example("dyck1").name
    'dyck1.crasp'
    """
    from crasp.languages.programs import program_path

    path = program_path(f"{name}.crasp")
    if not path.exists():
        raise CraspError(f"no shipped program {name!r}; crasp ships "
                         f"{', '.join(sorted(p.stem for p in path.parent.glob('*.crasp')))}")
    return path


def evaluate(program: Program, inputs: Inputs) -> Evaluation:
    """The value of every definition at every position of every input (see ``Evaluation``).

    ``inputs`` is one string, a list of strings, or a list of token lists, read as ``crasp run``
    reads its arguments (``crasp.api_inputs``); a token outside the alphabet raises
    ``InputError``.

    >>> program = load_program(example("dyck1"))
    >>> result = evaluate(program, "( ( ) )")
    >>> bool(result.accept[0]), result.trace["C_open"][0].tolist()
    (True, [1, 2, 2, 2])
    """
    return interpret.evaluate(program, token_batch(inputs, program.alphabet))


def format_trace(program: Program, inputs: Inputs, html: bool = False) -> str:
    """Every definition at every position of every input, as the text ``crasp run --trace``
    prints (or, with ``html``, the page ``--trace FILE.html`` writes).

    >>> print(format_trace(load_program(example("majority")), "ab").splitlines()[0])
    input 1: accept = False
    """
    batch = token_batch(inputs, program.alphabet)
    evaluation = interpret.evaluate(program, batch)
    return (_trace.format_html if html else _trace.format_text)(evaluation, batch)
