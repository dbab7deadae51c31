"""Reading files that may be hostile or broken: quickly refused, never a hang or a traceback.

* Only regular files are read: the file is opened with ``O_NONBLOCK`` (so a FIFO cannot block
  the open) and ``fstat`` must say "regular file" before a byte is read, so a symlink to
  ``/dev/zero``, a device, a FIFO or a directory is refused at once.
* The size is checked against a limit before reading, and no more than the size is read.
* JSON is bounded: nesting depth, digits of an integer, no NaN or Infinity, UTF-8 only.

Every failure is a ``SafeReadError`` (a ``CraspError``: exit status 2) naming the file.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from crasp.errors import CraspError

MAX_JSON_BYTES = 64 << 20
MAX_JSON_DEPTH = 64
MAX_INTEGER_DIGITS = 40


class SafeReadError(CraspError):
    """A file that is missing, not a regular file, too large, or not what it should be."""


def read_bytes_file(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, refused if it is anything else or larger than
    ``max_bytes``."""
    path = Path(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise SafeReadError(f"{path} is missing") from None
    except OSError as error:
        raise SafeReadError(f"cannot read {path}: {error.strerror}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise SafeReadError(f"{path} is not a regular file ({_file_type(status.st_mode)}); "
                                f"crasp reads only regular files")
        if status.st_size > max_bytes:
            raise SafeReadError(f"{path} is {status.st_size:,} bytes, more than the "
                                f"{max_bytes:,} allowed for this file")
        os.set_blocking(descriptor, True)
        # to the end of the file, not its size: /proc files report 0 bytes and have more,
        # and a file may grow while it is read (the limit still holds)
        chunks, read = [], 0
        while True:
            chunk = os.read(descriptor, min(max_bytes + 1 - read, 1 << 24))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            read += len(chunk)
            if read > max_bytes:
                raise SafeReadError(f"{path} is more than the {max_bytes:,} bytes allowed "
                                    f"for this file")
    except OSError as error:
        raise SafeReadError(f"cannot read {path}: {error.strerror}") from None
    finally:
        os.close(descriptor)


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _integer(path: Path):
    def parse(text: str) -> int:
        if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
            raise SafeReadError(f"{path}: an integer with {len(text.lstrip('-')):,} digits "
                                f"(at most {MAX_INTEGER_DIGITS} are allowed)")
        return int(text)
    return parse


def _refuse_constant(path: Path):
    def parse(name: str):
        raise SafeReadError(f"{path}: {name} is not allowed in this file")
    return parse


def _depth(value) -> int:
    """The nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_json(data: bytes, path: str | Path, max_depth: int = MAX_JSON_DEPTH):
    """Parse JSON ``data`` read from ``path`` with the bounds above."""
    path = Path(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SafeReadError(f"{path} is not UTF-8 text (byte {error.start})") from None
    try:
        value = json.loads(text, parse_int=_integer(path), parse_constant=_refuse_constant(path))
    except RecursionError:
        raise SafeReadError(f"{path}: JSON nested too deeply (at most {max_depth} levels)"
                            ) from None
    except json.JSONDecodeError as error:
        raise SafeReadError(f"{path} is not valid JSON (truncated or corrupt?): {error}"
                            ) from None
    if _depth(value) > max_depth:
        raise SafeReadError(f"{path}: JSON nested too deeply (at most {max_depth} levels)")
    return value


def read_json_file(path: str | Path, max_bytes: int = MAX_JSON_BYTES,
                   max_depth: int = MAX_JSON_DEPTH):
    """Read and parse a JSON file with every check of this module."""
    return parse_json(read_bytes_file(path, max_bytes), path, max_depth)
