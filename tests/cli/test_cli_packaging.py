"""What a package is expected to have: a version in one place, `python -m dbladder`, completion."""

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from cli_support import dbladder

import dbladder as package


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
    """What bash completion offers at the end of `line` (click's bash_complete protocol)."""
    words = line.split() + ([""] if line.endswith(" ") else [])
    env = {**os.environ, "_DBLADDER_COMPLETE": "bash_complete", "COMP_WORDS": " ".join(words)}
    env["COMP_CWORD"] = str(len(words) - 1)
    result = dbladder(env=env)
    assert result.returncode == 0, result.stderr
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
