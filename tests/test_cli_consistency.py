"""The command line's shared conventions: -o/--out (with --output kept) on every writing
command, an example in every --help, case-insensitive choices, "did you mean" for names."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.languages import get_language

COMMANDS = sorted(cli.list_commands(None))


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_shows_an_example(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert f"crasp {command} " in result.output.split("Options:")[0]


@pytest.mark.parametrize("command", ["compile", "decompile", "export", "generate", "train",
                                     "sweep", "report", "analyze"])
def test_writing_commands_take_o_and_out(command):
    help_text = CliRunner().invoke(cli, [command, "--help"]).output
    assert "-o, --out" in help_text


def test_output_stays_an_alias(tmp_path):
    for flag in ("--out", "--output", "-o"):
        target = tmp_path / flag.strip("-")
        result = CliRunner().invoke(cli, ["compile", "examples/L3.crasp", flag, str(target)])
        assert result.exit_code == 0, result.output
        assert (target / "config.json").is_file()


def test_choices_ignore_case():
    result = CliRunner().invoke(cli, ["train", "--preset", "Knee-Deep", "--print-config"])
    assert result.exit_code == 0, result.output
    assert '"preset": "knee-deep"' in result.output


@pytest.mark.parametrize("typed, meant", [("dyk1", "dyck1"), ("Majority", "majority"),
                                          ("anbcn", "anbncn")])
def test_misspelt_language_gets_a_suggestion(typed, meant):
    with pytest.raises(CraspError, match=f"did you mean '{meant}'"):
        get_language(typed)


@pytest.mark.parametrize("command", ["train", "sweep"])
def test_long_commands_take_progress_and_no_progress(command):
    assert "--progress / --no-progress" in CliRunner().invoke(cli, [command, "--help"]).output


def test_progress_defaults_to_whether_stderr_is_a_terminal(monkeypatch):
    import io
    import sys

    from crasp.util.progress import wants_progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert wants_progress(None) is False and wants_progress(True) is True
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert wants_progress(None) is True and wants_progress(False) is False


def _options():
    context = click.Context(cli)
    for name in sorted(cli.list_commands(context)):
        for param in cli.get_command(context, name).params:
            if isinstance(param, click.Option):
                yield name, param


def test_every_choice_of_every_command_ignores_case():
    sensitive = [f"crasp {name} {param.opts[0]}" for name, param in _options()
                 if isinstance(param.type, click.Choice) and param.type.case_sensitive]
    assert not sensitive


# "no default": None before click 8.3, its UNSET sentinel since
NO_DEFAULT = (None, getattr(click.core, "UNSET", None))


def test_every_option_with_a_default_shows_it_in_help():
    hidden = [f"crasp {name} {param.opts[0]}" for name, param in _options()
              if param.default not in NO_DEFAULT and not param.is_flag
              and not param.multiple and not param.show_default]
    assert not hidden


def test_mixed_case_choices_reach_the_command(tmp_path):
    result = CliRunner().invoke(cli, ["compile", "examples/majority.crasp", "--target", "FLOAT",
                                      "--dtype", "Float64", "--max-length", "20", "-o",
                                      str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert "float realization (float64" in result.output
