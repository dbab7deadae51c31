"""The wheel is the product: its metadata, its package data, and crasp run as an installed tool.

The wheel under test is ``$CRASP_WHEEL`` (set by scripts/test.sh, which runs this suite against
the installed wheel) or, in a checkout, one built here from the source tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import crasp
from crasp.languages.programs import PROGRAMS_DIR, write_programs

CHECKOUT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if os.environ.get("CRASP_WHEEL"):
        return Path(os.environ["CRASP_WHEEL"])
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--disable-pip-version-check", "--wheel-dir", str(out), str(CHECKOUT)],
                   check=True, capture_output=True)
    return next(out.glob("crasp-*.whl"))


@pytest.fixture(scope="module")
def wheel_files(wheel) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _metadata(wheel_files: dict[str, bytes]):
    name = next(n for n in wheel_files if n.endswith(".dist-info/METADATA"))
    return Parser().parsestr(wheel_files[name].decode())


def test_the_wheel_asks_for_a_torch_range_not_one_version(wheel_files):
    requires = _metadata(wheel_files).get_all("Requires-Dist")
    torch = [r for r in requires if r.split(">")[0].split("=")[0].split("<")[0].strip() == "torch"]
    assert torch == ["torch>=2.2"], requires
    assert any(r.startswith("pandas") and "extra == \"pandas\"" in r for r in requires), requires


def test_the_wheel_version_is_crasp_version(wheel_files):
    assert _metadata(wheel_files)["Version"] == crasp.__version__


def test_the_wheel_holds_every_reference_program_the_grammar_and_the_license(wheel_files):
    shipped = {p.name: p.read_bytes() for p in PROGRAMS_DIR.glob("*.crasp")}
    assert len(shipped) >= 31
    for name, text in shipped.items():
        assert wheel_files.get(f"crasp/programs/{name}") == text, name
    assert "crasp/grammar.lark" in wheel_files
    license_files = [n for n in wheel_files if n.endswith("LICENSE") and ".dist-info/" in n]
    assert license_files and b"MIT License" in wheel_files[license_files[0]]


def test_examples_are_copies_of_the_packaged_programs():
    examples = CHECKOUT / "examples"
    copies = {p.name: p.read_text(encoding="utf-8") for p in examples.glob("*.crasp")}
    packaged = {p.name: p.read_text(encoding="utf-8") for p in PROGRAMS_DIR.glob("*.crasp")}
    assert copies == packaged


def test_reference_programs_load_from_the_package():
    from crasp.languages import get_language

    dyck = get_language("dyck1")
    assert dyck.program.path == PROGRAMS_DIR / "dyck1.crasp"
    assert dyck.program.origin != "generated"
    assert crasp.depth_of(dyck.program.load()) == 2


def test_python_dash_m_crasp_is_the_command_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "crasp", "run", str(crasp.example("dyck1")),
                             "( ( ) )"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1 ( ( ) ): True"


def test_write_programs_writes_only_where_it_is_told(tmp_path):
    with pytest.raises(TypeError):
        write_programs()  # no default: it once wrote into the installed package
    written = write_programs(tmp_path, families="E")
    assert {p.name for p in written} == {p.name for p in PROGRAMS_DIR.glob("E*.crasp")}
    assert all(p.read_bytes() == (PROGRAMS_DIR / p.name).read_bytes() for p in written)


def test_an_unknown_example_names_the_shipped_ones():
    with pytest.raises(crasp.CraspError, match="dyck1"):
        crasp.example("dyck3")
