"""A program file as a language is read in the dialect asked for, by generate and by train."""

from __future__ import annotations

import json

from click.testing import CliRunner

from crasp.cli import cli
from crasp.languages import get_language
from crasp.train.loop import check_config
from crasp.train.presets import resolve_preset

# Hahn's parser reads `!A && B` as !(A && B); the conventional reading is (!A) && B. On "a" the
# first is true, the second false.
PROGRAM = 'A = "a"\nB = "b"\nx = !A && B\n'


def test_the_dialect_decides_the_labels(tmp_path):
    path = tmp_path / "p.cr"
    path.write_text(PROGRAM)
    conventional = get_language(str(path))
    hahn = get_language(str(path), "hahn")
    assert conventional.prefix_labels(["a"]).tolist() == [False]
    assert hahn.prefix_labels(["a"]).tolist() == [True]
    config = resolve_preset("default", language=str(path), dialect="hahn", depth=1)
    assert check_config(config).prefix_labels(["a"]).tolist() == [True]


def test_generate_reads_a_program_in_hahns_dialect(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.cr").write_text(PROGRAM)
    runner = CliRunner()
    for dialect in ("crasp", "hahn"):
        result = runner.invoke(cli, ["generate", "p.cr", "--bins", "1:1,2:2", "--n", "8",
                                     "--format", "jsonl", "--val-fraction", "0",
                                     "--dialect", dialect, "-o", f"data-{dialect}"])
        assert result.exit_code == 0, result.output
    def labels(dialect):
        lines = (tmp_path / f"data-{dialect}" / "p" / "train.jsonl").read_text().splitlines()
        return {tuple(row["tokens"]): row["labels"] for row in map(json.loads, lines)}
    assert labels("crasp")[("a",)] == "0" and labels("hahn")[("a",)] == "1"
    manifest = json.loads((tmp_path / "data-hahn" / "p" / "manifest.json").read_text())
    assert "--dialect hahn" in manifest["command"]


def test_a_program_language_has_at_most_127_tokens(tmp_path, monkeypatch):
    """Token ids are int8: an alphabet of 127 tokens makes datasets in both formats (every id
    drawn and written back as its token); 128 or more is refused in one line, exit status 2,
    never a numpy traceback."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for size in (127, 128, 300):
        tokens = [chr(0x4E00 + i) for i in range(size)]   # one character each (paper layout)
        (tmp_path / f"p{size}.crasp").write_text(
            "alphabet " + " ".join(f'"{t}"' for t in tokens) + f'\nx = #"{tokens[-1]}" > 0\n',
            encoding="utf-8")
        for output_format in ("paper", "jsonl"):
            result = runner.invoke(cli, ["generate", f"p{size}.crasp", "--bins", "3:3,4:4",
                                         "--n", "400", "--format", output_format,
                                         "-o", f"data-{size}-{output_format}"])
            if size > 127:
                assert result.exit_code == 2, result.output
                assert f"its alphabet has {size} tokens" in result.output
                assert "at most 127" in result.output and "Traceback" not in result.output
                continue
            assert result.exit_code == 0, result.output
            if output_format == "jsonl":
                lines = (tmp_path / f"data-{size}-jsonl" / f"p{size}" / "test_4_to_4.jsonl"
                         ).read_text().splitlines()
                seen = {token for row in map(json.loads, lines) for token in row["tokens"]}
                assert seen <= set(tokens) and len(seen) > 100


def test_a_program_languages_support_is_the_power_capped():
    """Uniform strings over a program's alphabet: |alphabet|^n exactly while it is below
    ``counting.BEYOND_ANY_LIMIT``, the cap beyond (a bin of length 10^6 computed a
    million-digit power per length before)."""
    from crasp import example
    from crasp.languages.program_language import program_language
    from crasp.util.counting import BEYOND_ANY_LIMIT

    language = program_language(str(example("anbncn")), None)
    size = len(language.alphabet)
    assert [language.support_size(n) for n in range(30)] == [size ** n for n in range(30)]
    assert language.support_size(10 ** 6) == BEYOND_ANY_LIMIT
