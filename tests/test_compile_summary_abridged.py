"""A compiled model's text summary lists at most a dozen names per layer; --json lists all."""

import json

from click.testing import CliRunner

from crasp.cli import cli


def chain(n: int) -> str:
    lines = ['alphabet "a" "b"', 'x0 = #"a" - #"b"']
    lines += [f"x{i} = x{i - 1} + 1" for i in range(1, n)]
    return "\n".join(lines + [f"y = x{n - 1} > 0"]) + "\n"


def test_long_layers_are_abridged_in_text_and_whole_in_json(tmp_path):
    program = tmp_path / "chain.crasp"
    program.write_text(chain(40))
    runner = CliRunner()
    text = runner.invoke(cli, ["compile", str(program), "-o", str(tmp_path / "m")])
    assert text.exit_code == 0, text.output
    assert "x0, x1, x2" in text.output and "(29 more)" in text.output
    assert "x39" not in text.output
    whole = runner.invoke(cli, ["compile", str(program), "-o", str(tmp_path / "m"), "--force",
                                "--json"])
    assert whole.exit_code == 0, whole.output
    summary = json.loads(whole.output[whole.output.index("{"):])
    assert sum(len(row["definitions"]) for row in summary["layer_table"]) == 41   # and y
