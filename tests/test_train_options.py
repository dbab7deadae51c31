"""The training options' one vocabulary: ``crasp train``'s options, ``--set`` and the config
table in docs/train.md agree with the ``TrainConfig`` fields (names and types)."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from crasp.train.cli import FIELD_OPTIONS, train_command
from crasp.train.config import TrainConfig, config_fields

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = {param.name: param for param in train_command.params
           if isinstance(param, click.Option)}


def test_every_field_but_search_has_a_train_option_of_its_own_name():
    assert set(FIELD_OPTIONS) | {"preset", "search"} == set(config_fields())
    missing = [name for name in config_fields() if name != "search" and name not in OPTIONS]
    assert not missing
    for name in config_fields():
        if name in OPTIONS:
            assert "--" + name.replace("_", "-") in OPTIONS[name].opts


@pytest.mark.parametrize("field", dataclasses.fields(TrainConfig), ids=lambda f: f.name)
def test_option_types_match_field_types(field):
    option = OPTIONS.get(field.name)
    hints = typing.get_type_hints(TrainConfig)
    if option is None or field.name in ("train_bin", "test_bins", "alibi_slopes"):
        return  # parsed from text by the config's own parsers (parse_bin, parse_bins)
    hint = hints[field.name]
    optional = [kind for kind in typing.get_args(hint) if kind is not type(None)]
    kind = optional[0] if type(None) in typing.get_args(hint) else hint  # int | None -> int
    expected = {int: click.INT, float: click.FLOAT}.get(kind)
    if expected is not None:
        assert option.type == expected
    else:
        assert option.type in (click.STRING,) or isinstance(option.type, click.Choice)


def test_docs_config_table_lists_every_field_and_its_option():
    text = (ROOT / "docs" / "train.md").read_text(encoding="utf-8")
    table = text[text.index("| field | CLI | default | meaning |"):].split("\n\n")[0]
    documented, options = [], []
    for row in table.splitlines()[2:]:
        fields_cell, cli_cell = row.split("|")[1:3]
        documented += re.findall(r"`(\w+)`", fields_cell)
        options += re.findall(r"--[\w-]+", cli_cell)
    assert sorted(documented) == sorted(config_fields())
    known = {opt for param in OPTIONS.values() for opt in param.opts}
    assert set(options) <= known


def test_set_unknown_key_suggests_the_field():
    result = CliRunner().invoke(train_command, ["--set", "d_modle=32", "--print-config"])
    assert result.exit_code == 2
    assert "did you mean 'd_model'?" in result.output


def test_set_and_options_give_the_same_config():
    by_option = CliRunner().invoke(train_command, ["--d-model", "32", "--lr", "0.01",
                                                   "--print-config"])
    by_set = CliRunner().invoke(train_command, ["--set", "d_model=32", "--set", "lr=0.01",
                                                "--print-config"])
    assert by_option.exit_code == by_set.exit_code == 0
    assert by_option.output == by_set.output


def test_train_without_language_says_what_it_will_run(tmp_path, monkeypatch):
    from crasp.errors import CraspError
    from crasp.train import loop

    def stop(*args, **kwargs):
        raise CraspError("stopped before training")

    monkeypatch.setattr(loop, "train", stop)
    result = CliRunner().invoke(train_command, ["--depth", "2", "-o", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "no --language given: training the default preset's L5 at depth 2" in result.output
    given = CliRunner().invoke(train_command, ["--language", "L3", "-o", str(tmp_path / "r2")])
    assert "no --language given" not in given.output


def test_train_help_shows_the_default_preset_value_of_every_field_option():
    from crasp.train.presets import resolve_preset

    defaults = resolve_preset("default")
    for name in FIELD_OPTIONS:
        shown = OPTIONS[name].show_default
        value = getattr(defaults, name)
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            assert shown == str(value), name
        else:
            assert isinstance(shown, str) and shown, name


def test_unknown_preset_gets_a_suggestion():
    from crasp.errors import CraspError
    from crasp.train.presets import resolve_preset

    with pytest.raises(CraspError, match="did you mean 'knee-deep'"):
        resolve_preset("kneedeep")
