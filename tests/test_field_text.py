"""The one text -> field value parser (``crasp.train.field_text``) behind --FIELD, --set, --grid."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.train.cli import _shown_default
from crasp.train.config import TrainConfig, config_fields
from crasp.train.field_text import parse_field, parse_value, field_types
from crasp.train.presets import resolve_preset

DEFAULT = resolve_preset("default")
FIELDS = [name for name in config_fields() if name not in ("preset", "search")]


@pytest.mark.parametrize("name", FIELDS)
def test_every_default_as_help_shows_it_parses_back_to_itself(name):
    """What `crasp train --help` prints as a field's default is valid option text for it."""
    value = getattr(DEFAULT, name)
    text = _shown_default(name, value)
    if value is None:
        pytest.skip(f"{name}: None is the absence of the option, not a value to type")
    parsed = parse_field(name, text, TrainConfig)
    assert resolve_preset("default", **{name: parsed}) == DEFAULT


@pytest.mark.parametrize("name, option_text, grid_text", [
    ("test_bins", "251:300,351:400@skewed", "251:300+351:400@skewed"),
    ("alibi_slopes", "0.5,0.25,0.125,0.0625", "[0.5,0.25,0.125,0.0625]"),
    ("ffn_widths", "32,32+16", "[[32],[32,16]]"),
    ("train_bin", "11:20", "11:20"),
])
def test_option_and_grid_spellings_give_the_same_config(name, option_text, grid_text):
    annotation = field_types(TrainConfig)[name]
    context = {"posenc": "alibi"} if name == "alibi_slopes" else {}
    from_option = resolve_preset("default", depth=2, **context,
                                 **{name: parse_field(name, option_text, TrainConfig)})
    from_grid = resolve_preset("default", depth=2, **context,
                               **{name: parse_value(grid_text, annotation)})
    assert from_option == from_grid


def test_set_is_typed_by_the_field():
    result = CliRunner().invoke(cli, ["train", "--language", "L3", "--set", "lr=3e-4",
                                      "--set", "attention=DP-Free", "--set", "qk_rank=none",
                                      "--print-config"])
    assert result.exit_code == 0, result.output
    assert '"lr": 0.0003' in result.output and '"attention": "dp-free"' in result.output


@pytest.mark.parametrize("item, message", [
    ("depth=three", "depth: cannot parse 'three'"),
    ("norm=layer", "norm: cannot parse 'layer'"),
    ("test_bins=1:x", "bad bin|LO:HI|test_bins"),
])
def test_a_bad_set_value_names_its_field(item, message):
    result = CliRunner().invoke(cli, ["train", "--language", "L3", "--set", item,
                                      "--print-config"])
    assert result.exit_code == 2
    assert re.search(message, result.output), result.output


def test_parse_field_refuses_with_a_crasp_error():
    with pytest.raises(CraspError, match="n_train"):
        parse_field("n_train", "1.5", TrainConfig)
