"""A report is replaced as a whole or not at all, and never written into the sweeps it reads.

Over an earlier report of another sweep, the disk fills up after k files, for every k: the
earlier report stays byte for byte and nothing is left beside it; with room for every file, the
new report stands alone (no heatmap of the old sweep's encodings beside the new cells.csv).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.util.outputs import OutputError
from crasp.train import report as rep

from test_report import fake_compiled, synthetic, write_cell


def contents(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes()
            for path in sorted(directory.rglob("*")) if path.is_file()}


def new_sweep(root: Path) -> None:
    """Only NoPE cells of L3: the report of the synthetic sweep also has RoPE heatmaps."""
    for seed in range(2):
        write_cell(root, "L3", 1, seed, 1.0)


@pytest.fixture
def quick_plots(monkeypatch):
    """The property is about files, not pictures: plots are a few distinct bytes."""
    monkeypatch.setattr(rep, "heatmap_png", lambda posenc, *_: f"heatmap {posenc}".encode())
    monkeypatch.setattr(rep, "budget_png", lambda posenc, *_: f"budget {posenc}".encode())


def disk_full_after(monkeypatch, room: int) -> list[str]:
    """Make the report's file writers fail with ENOSPC once ``room`` files are written."""
    written: list[str] = []

    def limited(writer):
        def write(path, data):
            if len(written) == room:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            writer(path, data)
            written.append(Path(path).name)
        return write

    monkeypatch.setattr(rep, "write_text_atomic", limited(rep.write_text_atomic))
    monkeypatch.setattr(rep, "write_bytes_atomic", limited(rep.write_bytes_atomic))
    return written


def test_a_report_is_replaced_whole_whichever_file_fails(tmp_path, monkeypatch, quick_plots):
    synthetic(tmp_path / "old")
    new_sweep(tmp_path / "new")
    out = tmp_path / "reports" / "report"
    rep.write_report(rep.build_report([tmp_path / "old"], compiled_fn=fake_compiled), out)
    old = contents(out)
    assert "heatmap_rope.png" in old
    new = rep.build_report([tmp_path / "new"], compiled=False)
    files = len(rep.write_report(new, tmp_path / "scratch"))
    assert files >= 4
    for room in range(files + 1):
        with monkeypatch.context() as patch:
            written = disk_full_after(patch, room)
            if room < files:
                with pytest.raises(OutputError, match="No space left on device"):
                    rep.write_report(new, out)
                assert contents(out) == old, room
            else:
                rep.write_report(new, out)
        assert len(written) == room
        assert os.listdir(tmp_path / "reports") == ["report"]  # no staging or old copy left
    assert contents(out) == contents(tmp_path / "scratch")
    assert "heatmap_rope.png" not in contents(out)


def test_crasp_report_on_a_full_disk_is_one_message_and_keeps_the_old_report(
        tmp_path, monkeypatch, quick_plots):
    synthetic(tmp_path / "old")
    new_sweep(tmp_path / "new")
    out = tmp_path / "report"
    assert CliRunner().invoke(cli, ["report", str(tmp_path / "old"), "--no-compiled",
                                    "-o", str(out)]).exit_code == 0
    old = contents(out)
    disk_full_after(monkeypatch, 2)
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "new"), "--no-compiled",
                                      "-o", str(out)])
    assert result.exit_code == 2
    assert result.output == (f"error: cannot write the report to {out}: No space left on "
                             f"device\n")
    assert contents(out) == old and sorted(os.listdir(tmp_path)) == ["new", "old", "report"]


def test_what_a_person_keeps_in_a_report_directory_stays(tmp_path, quick_plots):
    synthetic(tmp_path / "old")
    new_sweep(tmp_path / "new")
    out = tmp_path / "report"
    assert CliRunner().invoke(cli, ["report", str(tmp_path / "old"), "--no-compiled",
                                    "-o", str(out)]).exit_code == 0
    (out / "README.md").write_text("mine")
    (out / "budget-6").mkdir()
    (out / "budget-6" / "report.md").write_text("a nested report")
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "new"), "--no-compiled",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "README.md").read_text() == "mine"
    assert (out / "budget-6" / "report.md").read_text() == "a nested report"
    assert not (out / "heatmap_rope.png").exists()
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_a_swap_that_fails_at_any_rename_is_undone(tmp_path, monkeypatch, quick_plots):
    from crasp.train.report import replacing

    synthetic(tmp_path / "old")
    new_sweep(tmp_path / "new")
    out = tmp_path / "report"
    rep.write_report(rep.build_report([tmp_path / "old"], compiled=False), out)
    (out / "notes.txt").write_text("mine")
    old = contents(out)
    new = rep.build_report([tmp_path / "new"], compiled=False)
    renames = []
    real_rename = replacing.rename
    monkeypatch.setattr(replacing, "rename", lambda *paths: (renames.append(paths),
                                                              real_rename(*paths)))
    rep.write_report(rep.build_report([tmp_path / "old"], compiled=False), tmp_path / "counted")
    rep.write_report(new, tmp_path / "counted")
    steps = len(renames)
    assert steps >= 8  # the old files out, the new ones in
    for failing in range(steps):
        calls = []

        def fails_once(source, destination):
            calls.append(source)
            if len(calls) == failing + 1:
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            real_rename(source, destination)

        monkeypatch.setattr(replacing, "rename", fails_once)
        with pytest.raises(OutputError, match="Input/output error"):
            rep.write_report(new, out)
        assert contents(out) == old, failing


@pytest.mark.parametrize("default_place", [True, False])
def test_a_report_never_writes_into_the_sweeps_it_reads(tmp_path, monkeypatch, quick_plots,
                                                        default_place):
    calls = []

    def counting(language, config):
        calls.append(language)
        return fake_compiled(language, config)

    monkeypatch.setattr(rep, "evaluate_compiled", counting)
    synthetic(tmp_path / "sweep")
    sweep_files = contents(tmp_path / "sweep")
    out = tmp_path / "sweep" / "report" if default_place else tmp_path / "out"
    arguments = ["report", str(tmp_path / "sweep")] + ([] if default_place else ["-o", str(out)])
    for _ in range(2):
        result = CliRunner().invoke(cli, arguments)
        assert result.exit_code == 0, result.output
        after = {name: data for name, data in contents(tmp_path / "sweep").items()
                 if not name.startswith("report/")}
        assert after == sweep_files
    assert calls == ["L3", "L4", "L5"]  # the second report reused the first one's cache
    assert (out / rep.COMPILED_CACHE).is_file()


def test_a_persons_picture_beside_a_report_stays_and_the_old_reports_go(tmp_path, quick_plots):
    """A file of a picture's pattern that no report showed is the person's: a refresh keeps
    it; the earlier report's own pictures (its report.md shows them) go, the old sweep's
    RoPE heatmap among them."""
    synthetic(tmp_path / "old")
    new_sweep(tmp_path / "new")
    out = tmp_path / "report"
    assert CliRunner().invoke(cli, ["report", str(tmp_path / "old"), "--no-compiled",
                                    "-o", str(out)]).exit_code == 0
    assert (out / "heatmap_rope.png").is_file()
    mine = {"heatmap_mine.png": b"my heatmap", "budget_notes.png": b"my notes"}
    for name, data in mine.items():
        (out / name).write_bytes(data)
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "new"), "--no-compiled",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert all((out / name).read_bytes() == data for name, data in mine.items())
    assert not (out / "heatmap_rope.png").exists()
    fresh = rep.write_report(rep.build_report([tmp_path / "new"], compiled=False),
                             tmp_path / "fresh")
    assert set(contents(out)) == {path.name for path in fresh.values()} | set(mine)


def test_a_new_picture_never_takes_the_place_of_a_file_no_report_showed(tmp_path, quick_plots):
    """With report.md gone, which pictures were the report's is not known: a new one whose
    name is taken is refused, naming it, and nothing changes."""
    synthetic(tmp_path / "old")
    out = tmp_path / "report"
    arguments = ["report", str(tmp_path / "old"), "--no-compiled", "-o", str(out)]
    assert CliRunner().invoke(cli, arguments).exit_code == 0
    (out / "report.md").unlink()
    (out / "heatmap_nope.png").write_bytes(b"a picture of mine")
    before = contents(out)
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 2 and "heatmap_nope.png" in result.output, result.output
    assert "Traceback" not in result.output and contents(out) == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("report_json", sorted((ROOT / "docs").rglob("report.json")),
                         ids=lambda path: str(path.parent.relative_to(ROOT)))
def test_every_picture_of_a_committed_report_is_shown_in_its_markdown(report_json):
    """What a refresh relies on to tell a report's pictures from a person's, on every
    committed report (18): the pictures beside report.md are exactly those it shows."""
    from fnmatch import fnmatch

    from crasp.train.report.replacing import PICTURES, SHOWN_PICTURE

    folder = report_json.parent
    shown = set(SHOWN_PICTURE.findall((folder / "report.md").read_text(encoding="utf-8")))
    there = {path.name for path in folder.glob("*.png")
             if any(fnmatch(path.name, picture) for picture in PICTURES)}
    assert shown == there and there
