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
                                     "--format", "jsonl", "--val-fraction", "0", "--dialect", dialect,
                                     "-o", f"data-{dialect}"])
        assert result.exit_code == 0, result.output
    def labels(dialect):
        lines = (tmp_path / f"data-{dialect}" / "p" / "train.jsonl").read_text().splitlines()
        return {tuple(row["tokens"]): row["labels"] for row in map(json.loads, lines)}
    assert labels("crasp")[("a",)] == "0" and labels("hahn")[("a",)] == "1"
    manifest = json.loads((tmp_path / "data-hahn" / "p" / "manifest.json").read_text())
    assert "--dialect hahn" in manifest["command"]
