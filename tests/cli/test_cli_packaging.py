"""What a package is expected to have: a version in one place, `python -m dbladder`, completion."""

import os
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_support import dbladder
from click.testing import CliRunner

import dbladder as package
from dbladder.cli import cli


def test_the_version_is_the_installed_metadatas():
    assert package.__version__ == version("dbladder")
    for flag in ("-V", "--version"):
        result = dbladder(flag)
        assert (result.returncode, result.stdout) == (0, f"dbladder, version {version('dbladder')}\n")


def test_python_dash_m_dbladder_is_the_command():
    result = subprocess.run(
        [sys.executable, "-m", "dbladder", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, f"dbladder, version {version('dbladder')}\n")
    usage = subprocess.run(
        [sys.executable, "-m", "dbladder", "seed", "--seed", "x"], capture_output=True, text=True
    )
    assert usage.returncode == 2 and usage.stderr.startswith("Usage: dbladder seed [OPTIONS]\n")


def completions(line: str) -> list[str]:
    """What bash completion offers at the end of `line` (click's bash_complete protocol), asked of
    the command group in this process: the entry point's answer to the protocol is the test below's."""
    words = line.split() + ([""] if line.endswith(" ") else [])
    env = {
        "_DBLADDER_COMPLETE": "bash_complete",
        "COMP_WORDS": " ".join(words),
        "COMP_CWORD": str(len(words) - 1),
    }
    result = CliRunner().invoke(cli, [], env=env, prog_name="dbladder", catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return [item.partition(",")[2] for item in result.stdout.splitlines() if item]


def test_preset_completes_the_chosen_workloads_presets():
    assert completions("dbladder run --preset ") == [
        "read", "shop20", "shop20-1w", "write", "users-read", "users-write", "spike", "quick",
    ]  # fmt: skip
    assert completions("dbladder run --workload chirp --preset ") == [
        "post",
        "profile",
        "timeline",
        "mixed",
        "quick",
    ]
    assert completions("dbladder compare --workload orm --preset c") == ["ciso", "ciso-empty"]
    assert completions("dbladder run --workload nope.py --preset ") == []


def test_the_bash_completion_script_is_what_the_readme_says():
    result = dbladder(env={**os.environ, "_DBLADDER_COMPLETE": "bash_source"})
    assert result.returncode == 0 and "_dbladder_completion()" in result.stdout
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert 'eval "$(_DBLADDER_COMPLETE=bash_source dbladder)"' in readme


@pytest.mark.slow
def test_the_wheel_holds_py_typed_and_the_license_and_building_it_warns_nothing_of_the_license(tmp_path):
    # What `pip install .` builds: the wheel, built verbosely so that setuptools' own warnings show
    # (the table form of `license` warned "deprecated ... by 2027-Feb-18").
    root = Path(__file__).parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp_path), str(root)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    output = result.stdout + result.stderr
    license_warnings = [
        line
        for line in output.splitlines()
        if "licen" in line.lower() and ("warn" in line.lower() or "deprecat" in line.lower())
    ]
    assert license_warnings == []
    (wheel,) = tmp_path.glob("dbladder-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"dbladder-{version('dbladder')}.dist-info/METADATA").decode()
    assert "dbladder/py.typed" in names
    assert f"dbladder-{version('dbladder')}.dist-info/licenses/LICENSE" in names
    assert "License-Expression: MIT\n" in metadata and "Classifier: Typing :: Typed\n" in metadata
