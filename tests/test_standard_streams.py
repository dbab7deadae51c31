"""Standard input and output of the command line, as a pipe filter sees them.

Inputs: every combination of line ends (LF, CRLF, lone CR, none at the end) and byte-order marks
at the start of lines, cut into reads at every place, gives the tokens of the clean lines; a
line over the limit is refused before it is held; ``crasp run`` answers each line as it arrives.
Outputs: a closed standard output, a broken pipe and a full disk are exit status 2 with one
message, whichever write fails. Programs: CRLF and a byte-order mark read as LF and nothing, a
lone CR is an error, from a file or standard input alike.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from crasp.cli import cli
from crasp.errors import InputError
from crasp.util.inputs import line_groups, read_lines

from strategies import programs

PROGRAM = 'alphabet "a" "bb" "c"\nanswer = #"a" > #"c"\n'
ALPHABET = ("a", "bb", "c")
LINE_ENDS = ("\n", "\r\n", "\r")
BOM = "\ufeff"
COMMAND = [sys.executable, "-m", "crasp"]

token_lines = st.lists(st.lists(st.sampled_from(ALPHABET + ("x", "é")), min_size=1, max_size=4),
                       min_size=1, max_size=6)


@st.composite
def streams(draw):
    """(the bytes of a stream, its lines' tokens): each line with any line end, the last one
    perhaps with none, and a byte-order mark at the start of any line."""
    lines = draw(token_lines)
    text = ""
    for number, tokens in enumerate(lines):
        last = number == len(lines) - 1
        end = draw(st.sampled_from(LINE_ENDS + (("",) if last else ())))
        text += (BOM if draw(st.booleans()) else "") + " ".join(tokens) + end
    return text.encode("utf-8"), lines


class Reads(io.RawIOBase):
    """A stream that returns ``data`` in reads of the given sizes (then the rest)."""

    def __init__(self, data: bytes, sizes: list[int]):
        self.data, self.sizes = data, list(sizes)

    def read1(self, _size: int = -1) -> bytes:
        size = self.sizes.pop(0) if self.sizes else len(self.data)
        chunk, self.data = self.data[:size], self.data[size:]
        return chunk


@given(streams(), st.lists(st.integers(1, 7), max_size=40))
def test_line_ends_and_byte_order_marks_never_reach_the_tokens(stream, sizes):
    data, lines = stream
    groups = list(line_groups(Reads(data, sizes)))
    read = [tokens for group in groups for _, tokens in read_lines(group, ALPHABET)]
    assert read == lines
    assert all(group for group in groups)


@given(streams())
def test_crasp_run_reads_every_line_end_and_byte_order_mark(tmp_path_factory, stream):
    data, lines = stream
    program = tmp_path_factory.mktemp("p") / "p.crasp"
    program.write_text(PROGRAM)
    result = CliRunner().invoke(cli, ["run", str(program), "--json"], input=data)
    assert result.exit_code == 0, result.output
    answers = [json.loads(line) for line in result.output.splitlines()]
    assert [answer["tokens"] for answer in answers] == lines
    assert [answer["id"] for answer in answers] == list(range(1, len(lines) + 1))


def test_a_byte_order_mark_inside_a_line_is_an_ordinary_character():
    group = next(line_groups(io.BytesIO(f"a{BOM}bb c\n".encode())))
    assert list(read_lines(group, ALPHABET)) == [(f"a{BOM}bb c", [f"a{BOM}bb", "c"])]


@given(st.lists(st.integers(0, 12), min_size=1, max_size=5), st.integers(1, 12),
       st.lists(st.integers(1, 5), max_size=10))
def test_a_line_longer_than_the_limit_is_refused_after_the_lines_before_it(lengths, limit,
                                                                           sizes):
    data = b"".join(b"a" * length + b"\n" for length in lengths)
    read, groups = [], line_groups(Reads(data, sizes), max_line_bytes=limit)
    too_long = next((number for number, length in enumerate(lengths, 1) if length > limit), None)
    if too_long is None:
        assert [line for group in groups for line in group] == ["a" * n for n in lengths]
        return
    with pytest.raises(InputError, match=f"line {too_long} is longer than {limit:,} bytes"):
        for group in groups:
            read += group
    assert read == ["a" * n for n in lengths[:len(read)]] and len(read) < too_long


def test_an_endless_line_is_refused_within_the_limit(tmp_path):
    program = tmp_path / "p.crasp"
    program.write_text(PROGRAM)
    with open("/dev/zero", "rb") as zeros:
        result = subprocess.run(COMMAND + ["run", str(program), "--max-line-bytes", "100000"],
                                stdin=zeros, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == ("error: standard input: line 1 is longer than 100,000 bytes, the "
                             "limit on one input (--max-line-bytes)\n")


def test_input_that_is_not_utf8_names_its_line():
    result = CliRunner().invoke(cli, ["run", "examples/dyck1.crasp"], input=b"()\n(\xff)\n")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "1 (): True", "error: standard input: line 2 is not UTF-8 text (byte 2 of the line)"]


def test_crasp_run_answers_each_line_while_standard_input_stays_open(tmp_path):
    program = tmp_path / "p.crasp"
    program.write_text(PROGRAM)
    process = subprocess.Popen(COMMAND + ["run", str(program)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for number, (line, answer) in enumerate([(b"a c a\n", b"True"), (b"c\r", b"False"),
                                                 (b"\na\r\n", b"True")], 1):
            process.stdin.write(line)
            process.stdin.flush()  # the line is out; the stream stays open
            assert process.stdout.readline() == (
                f"{number} {line.decode().strip()}: ".encode() + answer + b"\n")
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        assert process.stdout.read() == b""
    finally:
        process.kill()
        process.wait()


def run_with(arguments, stdout=None, close=None, stdin=None):
    """crasp ARGUMENTS in a process whose standard output is ``stdout``, with the standard
    stream ``close`` (0 or 1) closed."""
    def before():
        if close is not None:
            os.close(close)
    return subprocess.run(COMMAND + arguments, stdout=stdout, stderr=subprocess.PIPE,
                          stdin=stdin, preexec_fn=before, timeout=60)


def broken_pipe():
    """The write end of a pipe whose read end is closed: a write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


FAILURES = {
    "closed": (dict(close=1), "it is closed (file descriptor 1 is not open)"),
    "full disk": (dict(stdout="/dev/full"), "No space left on device"),
    "broken pipe": (dict(stdout=broken_pipe), "Broken pipe"),
}


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("arguments", [["run", "examples/dyck1.crasp", "( )"],
                                       ["fmt", "examples/dyck1.crasp"], ["--version"]])
def test_output_that_cannot_be_written_is_exit_status_2(arguments, failure):
    options, reason = FAILURES[failure]
    options = dict(options)
    opened = None
    if options.get("stdout") == "/dev/full":
        opened = options["stdout"] = os.open("/dev/full", os.O_WRONLY)
    elif callable(options.get("stdout")):
        opened = options["stdout"] = options["stdout"]()
    try:
        result = run_with(arguments, **options)
    finally:
        if opened is not None:
            os.close(opened)
    assert result.returncode == 2
    assert result.stderr.decode() == f"error: cannot write to standard output: {reason}\n"


def test_a_command_that_writes_nothing_to_standard_output_does_not_need_it(tmp_path):
    program = tmp_path / "p.crasp"
    program.write_text("x = #\"a\"   >  0\n")
    result = run_with(["fmt", "-w", str(program)], close=1)
    assert result.returncode == 0, result.stderr
    assert program.read_text() == 'x = #"a" > 0\n'


@pytest.mark.parametrize("arguments, message", [
    (["run", "examples/dyck1.crasp"], "standard input is closed: give the inputs as arguments"),
    (["depth-check", "-"], "standard input is closed: there is no program to read from -"),
    (["fmt", "-"], "standard input is closed: there is no program to read from -"),
])
def test_a_closed_standard_input_is_one_message(arguments, message):
    result = run_with(arguments, stdout=subprocess.PIPE, close=0)
    assert (result.returncode, result.stderr.decode()) == (2, f"error: {message}\n")


class FailingOutput(io.StringIO):
    """Standard output on a disk that fills up after ``room`` writes."""

    def __init__(self, room: int):
        super().__init__()
        self.room = room

    def write(self, text: str) -> int:
        if self.room == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= 1
        return super().write(text)


@pytest.mark.parametrize("room", range(6))
def test_whichever_write_fails_the_command_ends_with_one_message(monkeypatch, capsys, room):
    lines = "".join(f"{'()' * n}\n" for n in range(1, 6))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines.encode())))
    monkeypatch.setattr("crasp.util.inputs.READ_SIZE", 4)  # one line per read: five writes
    failing = FailingOutput(room)
    monkeypatch.setattr(sys, "stdout", failing)
    code = cli.main(["run", "examples/dyck1.crasp"], standalone_mode=False)
    monkeypatch.undo()
    assert capsys.readouterr().err == ("" if room >= 5 else
                                       "error: cannot write to standard output: No space left "
                                       "on device\n")
    assert (code or 0) == (0 if room >= 5 else 2)
    assert failing.getvalue().splitlines() == [f"{n} {'()' * n}: True"
                                               for n in range(1, min(room, 5) + 1)]


@given(st.lists(st.integers(0, 30), max_size=40), st.integers(1, 5), st.integers(1, 64))
def test_batches_keep_the_order_and_bound_the_padded_array(lengths, rows, cells):
    from crasp import cli as cli_module

    items = [(str(i), ["a"] * n) for i, n in enumerate(lengths)]
    original = cli_module.STDIN_BATCH, cli_module.BATCH_CELLS
    cli_module.STDIN_BATCH, cli_module.BATCH_CELLS = rows, cells
    try:
        batches = list(cli_module._batches(items))
    finally:
        cli_module.STDIN_BATCH, cli_module.BATCH_CELLS = original
    assert [item for batch in batches for item in batch] == items
    for batch in batches:
        padded = len(batch) * max(len(tokens) + 1 for _, tokens in batch)
        assert len(batch) == 1 or (len(batch) <= rows and padded <= cells)


@given(token_lines.filter(lambda lines: any("x" in tokens for tokens in lines)),
       st.integers(1, 4))
def test_strict_alphabet_answers_every_line_before_the_refused_one_and_names_it(
        tmp_path_factory, lines, rows):
    from crasp import cli as cli_module

    program = tmp_path_factory.mktemp("p") / "p.crasp"
    program.write_text(PROGRAM)
    refused = next(number for number, tokens in enumerate(lines, 1)
                   if any(token not in ALPHABET for token in tokens))
    original, cli_module.STDIN_BATCH = cli_module.STDIN_BATCH, rows
    try:
        result = CliRunner().invoke(cli, ["run", str(program), "--json", "--strict-alphabet"],
                                    input="".join(" ".join(tokens) + "\n" for tokens in lines))
    finally:
        cli_module.STDIN_BATCH = original
    *answers, error = result.output.splitlines()
    assert result.exit_code == 2
    assert [json.loads(answer)["tokens"] for answer in answers] == lines[:refused - 1]
    assert error.startswith(f"error: input {refused}: token ")


@given(programs(), st.booleans())
def test_a_programs_line_ends_and_byte_order_mark_as_documented(text, bom):
    import crasp
    from crasp.errors import ProgramError

    canonical = crasp.format_program(crasp.parse_program(text))
    start = BOM if bom else ""
    assert crasp.format_program(crasp.parse_program(start + text.replace("\n", "\r\n"))) == \
        canonical
    via_stdin = CliRunner().invoke(cli, ["fmt", "-"],
                                   input=(start + text.replace("\n", "\r\n")).encode())
    assert via_stdin.exit_code == 0 and via_stdin.output == crasp.format_source(
        crasp.parse_program(text))
    if text.strip().count("\n"):
        with pytest.raises(ProgramError, match="unexpected character '\\\\r'"):
            crasp.parse_program(start + text.strip().replace("\n", "\r") + "\n")
