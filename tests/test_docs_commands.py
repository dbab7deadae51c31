"""Docs that stand alone: every ``crasp`` command in README.md and docs/ runs as written
(long ones shrunk, as listed in ``SHRINK``), the README's Python API section runs, what the
README tour writes is ignored by git, and no document or docstring cites a missing file."""

from __future__ import annotations

import fnmatch
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.languages.programs import PROGRAMS_DIR

CHECKOUT = Path(__file__).resolve().parent.parent
DOCUMENTS = [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").glob("*.md"))]
"""Not docs/results/: those reports record the commands that made them (hours of sweeps, some
on a GPU with device=cuda); the same commands, shrunk, run here from docs/experiments.md."""

TINY_DATA = ["--train-bin", "4:8", "--test-bins", "9:12,13:16", "--n-train", "64",
             "--n-test", "16", "--epochs", "1", "--no-progress"]
TINY_TRAINING = TINY_DATA + ["--d-ff", "32"]
TINY_GRID = ["epochs=1", "n_train=32", "n_test=8", "train_bin=4:8", "test_bins=9:12",
             "d_ff=32"]
SHRINK = {
    # command as written -> what the test runs instead (the same command, smaller)
    "crasp train --depth 3 --posenc rope --language L5": TINY_TRAINING,
    "crasp train --depth 2 --language examples/L4_predict.crasp -o runs/l4": TINY_TRAINING,
    "crasp train --preset knee-deep --depth 3 --language L5": TINY_TRAINING + ["--d-model", "16"],
    "crasp train --preset knee-deep --language L6 --depth 3 --d-model 256 --lr 1e-4 --epochs 1 "
    "--n-train 100 --n-test 20 --test-bins 251:300 --threads 1 --no-progress "
    "-o runs/time-d3-w256": TINY_TRAINING + ["--d-model", "16"],
    # the compiled model fixes the widths, so only the data and the epochs shrink
    "crasp train --language L5 --depth 3 --init-from compiled --lr 1e-4 -o runs/L5-from-compiled":
        TINY_DATA,
    "crasp train --language L5 --depth 3 --init-from runs/L5-from-compiled -o runs/L5-continued":
        TINY_DATA,
    "crasp analyze runs/hess/L3-d2-nope --hessian -o runs/hess/L3-d2-nope-hessian":
        ["--hessian-strings", "4"],
    "crasp sweep": {"--depths": "1", "--languages": "L3", "--seeds": "1", "--jobs": "1",
                    "extra": ["--no-progress", *TINY_GRID]},
}
NOT_RUN = {
    "crasp sweep --posenc nope,t5 --languages L4,E3 --depths 1:2 --seeds 3 --grid epochs=6 "
    "attention=softmax,dp-free --jobs 1 -o runs/study17":
        "docs/analysis.md's 48-cell study (an hour of CPU); its options run in "
        "test_the_options_are_sweep_axes_and_train_options",
    "crasp report runs/study17 -o docs/analysis/t5-dp-free --no-compiled":
        "reports that study; crasp report runs/sweep runs here",
    "crasp sweep --depths 1:3 --languages L3:L5 --seeds 3 --grid precision=none,8.4 d_model=16 "
    "n_heads=2 d_ff=32 train_bin=11:30 test_bins=31:60 n_train=1000 n_test=200 epochs=20 "
    "-o fpcost": "docs/train.md's 54-cell cost of --precision (half an hour of CPU); the "
                 "option runs in tests/test_fixed_precision_train.py",
    "crasp report fpcost": "reports that study; crasp report runs/sweep runs here",
    "crasp sweep --languages L4 --depths 2,3 --seeds 3 --jobs 1 --grid precision=none,6.2 "
    "d_model=2 n_heads=1 d_ff=32 norm=none lr=0.003 train_bin=4:16 test_bins=17:40 n_train=2000 "
    "n_test=200 epochs=100 patience=25 -o runs/extraction/L4":
        "one of docs/extraction.md's study sweeps (its 72 runs take 20 minutes of one core); "
        "tests/test_extraction_tables.py checks the committed results",
    "crasp sweep --depths 3:6 --languages L6 --preset one-head --seeds 5 --search "
    "\"d_model=64,256 lr=1e-3,3e-4,1e-4 epochs=25\" -o runs/search":
        "a search of 20 cells (hours); tests/test_sweep_search.py runs a tiny real search sweep "
        "through the CLI",
    "crasp sweep --depths 4 --languages L7 --preset knee-deep --search paper -o runs/paper":
        "the paper's grid, a day of CPU; its cells are listed in tests/test_sweep_search.py",
    "crasp sweep --depths 3 --languages L6 --preset knee-deep --search paper --seeds 1:4 "
    "--split-trials --trials 0,1 --jobs 2 -o runs/paper":
        "the paper's grid in parts, hours of CPU; tests/test_search_parts.py runs tiny split "
        "sweeps with --trials through the CLI",
    "crasp sweep --depths 3 --languages L6 --preset knee-deep --search paper --seeds 1:4 "
    "--split-trials --jobs 8 -o runs/paper": "the rest of those parts (above)",
    "crasp report runs/knee-deep": "reports the Slurm sweep the sbatch lines above it make; "
                                   "crasp report runs/sweep runs here",
    "crasp equiv nest20.crasp nest20.crasp --unbounded --method smt":
        "docs/benchmarks.md's timing of a 20-link chain of nested counts (7 s; the 10-link "
        "one beside it runs); tests/test_verify_twins.py proves chains of 4 and 14 links of "
        "three shapes against renamed copies",
    "crasp extract runs/L6-d3-nope-s2 -o l6.crasp --progress":
        "docs/decompile.md's cost of extraction on a paper-grid run (d_model 512, not "
        "committed; hours); tests/test_extract.py runs --progress on a tiny run",
    "crasp extract runs/L6-d3-nope-s2 -o l6.crasp --precision 4.1":
        "the same run's refusal at 4.1 (not committed); tests/test_decompile_budget.py "
        "refuses a 32-wide head's count of 10^55 the same way",
    "crasp extract runs/L6-d3-nope-s2 -o l6.crasp":
        "the same run's refusal at every candidate (not committed); tests/test_extract.py "
        "refuses a tiny run at every candidate the same way, before a validation string",
    "crasp decompile runs/ex4/cells/L4-d2-nope_fp6.2-s1-242659fb8c -o - --vocabulary-only":
        "reads a trained run of docs/extraction.md's study (not committed); "
        "tests/test_decompile_vocabulary.py shrinks that run's committed program and runs "
        "the option on compiled and random models",
}


FILE_WRITE = re.compile(r"^\$ printf '([^']*)' > (\S+)$")
"""A ``$ printf 'TEXT' > FILE`` line: the document makes a file that its next commands read."""


def commands(document: Path) -> list[tuple[str, str | None]]:
    """(command line, its stdin) of every crasp command in the document's code blocks; a
    ``printf 'TEXT' > FILE`` line comes as ("> FILE", TEXT)."""
    found, block, lines = [], False, document.read_text(encoding="utf-8").splitlines()
    joined: list[str] = []
    for line in lines:
        if line.startswith("```"):
            block = not block
            continue
        if not block:
            continue
        text = line.strip()
        written = FILE_WRITE.match(text)
        if written and not joined:
            found.append((f"> {written[2]}", written[1].encode().decode("unicode_escape")))
            continue
        if joined:
            joined.append(text)
        elif re.match(r"^(\$ )?(crasp |printf .*\| *crasp )", line):  # output is indented
            joined = [text]
        if joined and not text.endswith("\\"):
            whole = " ".join(part.rstrip("\\").strip() for part in joined)
            found.append(_command(whole.removeprefix("$ ")))
            joined = []
    return found


def expected_statuses(document: Path) -> dict[str, int]:
    """The exit status of each command the document shows not succeeding: 2 when its output
    (up to the next ``$`` line) has an ``error:`` line, N when it has a line ``(exit status
    N)`` (``crasp equiv`` answering no, for example)."""
    statuses, current = {}, None
    for line in document.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        status = re.match(r"^\(exit status (\d+)\)$", text)
        if text.startswith("$ "):
            current = _command(text[2:])[0] if re.match(r"^\$ crasp ", text) else None
        elif current and status:
            statuses[current] = int(status[1])
        elif current and re.match(r"^(\S+: )?error: ", text):
            statuses[current] = 2
    return statuses


def _command(line: str) -> tuple[str, str | None]:
    line = re.sub(r"\s+#.*$", "", line)
    stdin = None
    if line.startswith("printf"):
        printf, line = line.split("|", 1)
        stdin = shlex.split(printf)[1].encode().decode("unicode_escape")
    return line.strip(), stdin


def shrunk(line: str) -> list[str]:
    words = shlex.split(line)
    if line in SHRINK:
        return words[1:] + SHRINK[line]
    if words[1] == "sweep":
        rule = SHRINK["crasp sweep"]
        words = [rule.get(words[i - 1], word) if i > 0 else word for i, word in enumerate(words)]
        return words[1:] + rule["extra"]
    return words[1:]


def all_commands() -> list[tuple[str, list[tuple[str, str | None]]]]:
    return [(str(d.relative_to(CHECKOUT)), commands(d)) for d in DOCUMENTS if commands(d)]


def run_document(cwd: Path, document_commands, statuses: dict[str, int] | None = None
                 ) -> list[str]:
    runner = CliRunner()
    ran = []
    for line, stdin in document_commands:
        if line in NOT_RUN:
            continue
        if line.startswith("> "):
            (cwd / line[2:]).write_text(stdin, encoding="utf-8")
            continue
        result = runner.invoke(cli, shrunk(line), input=stdin, catch_exceptions=False)
        expected = (statuses or {}).get(line, 0)
        assert result.exit_code == expected, f"{line}\n{result.output}"
        assert "Traceback" not in result.output, f"{line}\n{result.output}"
        ran.append(line)
    return ran


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    (tmp_path / "examples").symlink_to(PROGRAMS_DIR, target_is_directory=True)
    # programs read back from trained transformers, which the docs check (read only)
    (tmp_path / "docs" / "extraction").mkdir(parents=True)
    (tmp_path / "docs" / "extraction" / "programs").symlink_to(
        CHECKOUT / "docs" / "extraction" / "programs", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_documents_have_the_commands_this_test_expects():
    found = {name: [line for line, _ in cmds if not line.startswith("> ")]
             for name, cmds in all_commands()}
    assert len(found["README.md"]) == 16
    listed = {line for cmds in found.values() for line in cmds}
    assert set(NOT_RUN) <= listed
    assert {line for line in SHRINK if line != "crasp sweep"} <= listed


@pytest.mark.parametrize("document,document_commands", all_commands(),
                         ids=[name for name, _ in all_commands()])
def test_every_crasp_command_in_the_docs_runs(document, document_commands, scratch):
    assert run_document(scratch, document_commands, expected_statuses(CHECKOUT / document))


def test_the_readme_tour_writes_only_what_git_ignores(scratch):
    before = set(scratch.iterdir())
    run_document(scratch, commands(CHECKOUT / "README.md"))
    ignored = [p.strip().strip("/") for p in (CHECKOUT / ".gitignore").read_text().splitlines()
               if p.strip() and not p.startswith("#")]
    written = sorted(p.name for p in set(scratch.iterdir()) - before)
    assert written and all(any(fnmatch.fnmatch(name, pattern) for pattern in ignored)
                           for name in written), written
    assert (scratch / "data" / "L5" / "manifest.json").is_file()   # where the README says
    assert (scratch / "runs" / "L5-d3-rope-s0" / "results.json").is_file()
    assert (scratch / "runs" / "sweep" / "report" / "report.md").is_file()


def test_the_readme_python_api_section_runs(scratch):
    text = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)[1]
    namespace: dict = {}
    exec(compile(code, "README.md (Python API)", "exec"), namespace)
    assert len(namespace["load_sweep"]("runs/api-sweep")) == 4   # 2 cells x 2 test bins


PYTHON_BLOCKS_NOT_RUN = {
    "docs/languages.md": "a reference listing with placeholders (length, rng, tokens)",
    "docs/train.md": "trains the default preset on L5 (minutes); docs/api.md runs train tiny",
    "docs/api.md": "runs as a doctest in test_api_docs.py",
    "docs/interop.md": "loads the exports its crasp commands write (and needs no crasp): "
                       "tests/test_interop.py runs the same recipes in a process without crasp",
}


def python_blocks(document: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", document.read_text(encoding="utf-8"), re.S)


def test_python_blocks_in_the_docs_run_as_written(scratch):
    """In document order, in one directory: docs/compiler.md saves dyck1.model, which the
    standalone executor of docs/model-format.md then runs."""
    namespace: dict = {}
    ran = []
    for document in DOCUMENTS[1:]:
        name = str(document.relative_to(CHECKOUT))
        if name in PYTHON_BLOCKS_NOT_RUN:
            continue
        for code in python_blocks(document):
            exec(compile(code, name, "exec"), namespace)
            ran.append(name)
    assert {"docs/compiler.md", "docs/model-format.md"} <= set(ran)
    expected = crasp.evaluate(crasp.load_program("examples/dyck1.crasp"), "(()))(").output[0]
    assert namespace["run"]("dyck1.model", list("(()))("))[1:].tolist() == expected.tolist()


CITED = re.compile(r"(?<![\w/.-])((?:docs|examples|scripts|benchmarks|tests|crasp)/"
                   r"[\w./-]*\w)(?![\w{])")   # not templates such as examples/L{k}.crasp


def _cited_paths(text: str) -> set[str]:
    return {m for m in CITED.findall(text) if "<" not in m and "*" not in m}


def _exists(cited: str) -> bool:
    if cited.startswith("crasp/"):
        return (Path(crasp.__file__).parent.parent / cited).exists()
    return (CHECKOUT / cited).exists()


def test_no_document_or_docstring_cites_a_missing_file():
    package = Path(crasp.__file__).parent
    sources = DOCUMENTS + sorted(package.rglob("*.py"))
    cited = {(source.name, path) for source in sources
             for path in _cited_paths(source.read_text(encoding="utf-8"))}
    assert len(cited) > 30
    missing = sorted(f"{name}: {path}" for name, path in cited if not _exists(path))
    assert not missing, missing
