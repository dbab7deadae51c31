"""Progress bars: one ``--progress/--no-progress`` option and one bar for every long command.

By default a bar is shown only when stderr is a terminal, so logs and pipes stay clean;
``tqdm.auto`` draws a widget in notebooks and text elsewhere. Bars go to stderr.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import click

progress_option: Callable = click.option(
    "--progress/--no-progress", default=None,
    help="Show a progress bar on stderr.  [default: only when stderr is a terminal]")


def wants_progress(flag: bool | None) -> bool:
    """The option's value, with "not given" meaning "when stderr is a terminal"."""
    return sys.stderr.isatty() if flag is None else flag


def progress_bar(**options: Any):
    from tqdm.auto import tqdm

    return tqdm(file=sys.stderr, dynamic_ncols=True, **options)
