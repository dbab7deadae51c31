"""The presets differ from each other exactly where their documentation says."""

from dataclasses import asdict

from click.testing import CliRunner

from crasp.cli import cli
from crasp.train.presets import resolve_preset


def test_one_head_is_default_with_one_head():
    default = asdict(resolve_preset("default"))
    one_head = asdict(resolve_preset("one-head"))
    differences = {key for key in default if default[key] != one_head[key]}
    assert differences == {"n_heads", "preset"}
    assert one_head["n_heads"] == 1 and default["n_heads"] == 4


def test_one_head_preset_through_the_cli():
    result = CliRunner().invoke(cli, ["train", "--print-config", "--preset", "one-head"])
    assert result.exit_code == 0, result.output
    assert '"n_heads": 1' in result.output
