"""The command line: exact output shapes and exit codes, through the installed entry point (the
user mistakes in this process: the same message and exit code, without a new interpreter each)."""

import json
import os

import pytest
from cli_support import dbladder, dbladder_here


def test_seed_creates_exact_counts(tmp_path):
    result = dbladder(
        "seed",
        "--db",
        f"sqlite:///{tmp_path}/x.db",
        "--size",
        "products=1000",
        "--size",
        "orders=5000",
        "--seed",
        "7",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["products", "1,000", "rows"]
    assert lines[1].split()[:3] == ["orders", "5,000", "rows"]
    assert lines[2].split()[:3] == ["order_items", "10,000", "rows"]
    assert lines[-1].split()[:3] == ["total", "16,000", "rows"]
    assert "rows/s" in lines[0]


def test_seed_with_a_relative_path_writes_in_the_current_folder(tmp_path):
    result = dbladder_here(
        "seed", "--db", "sqlite:///rel.db", "--size", "products=10", "--size", "orders=10", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "rel.db").exists()


def test_engines_json_has_version_and_durability(tmp_path):
    (tmp_path / "x.db").touch()  # an empty file is an empty SQLite database; `engines` creates none
    result = dbladder_here("engines", "--db", f"sqlite:///{tmp_path}/x.db", "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["engine"] == "sqlite" and info["driver"] == "apsw"
    assert info["durability"] == {"journal_mode": "WAL", "synchronous": "FULL"}
    assert info["durable"] is True and result.stderr == ""


def test_weak_durability_is_one_loud_line(tmp_path):
    (tmp_path / "x.db").touch()
    result = dbladder_here("engines", "--db", f"sqlite:///{tmp_path}/x.db?synchronous=NORMAL")
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "synchronous=NORMAL" in warnings[0]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["engines", "--db", "oracle://x/y"], 2, "Error: unknown database engine 'oracle'"),
        (["engines", "--db", "shop.db"], 2, "Error: not a database URL: 'shop.db'"),
        (["engines", "--db", "sqlite:///x.db?journal_mode=FAST"], 2, "Error: bad settings"),
        (
            ["seed", "--db", "sqlite:////nonexistent-folder/x.db"],
            1,
            "Error: cannot create the SQLite file /nonexistent-folder/x.db: "
            "folder /nonexistent-folder does not exist",
        ),
        (["seed", "--size", "products=1"], 2, "Error: invalid configuration:"),
        (["seed", "--scale", "many"], 2, "Error: Invalid value for '--scale'"),
        (["engines", "--db", "postgresql://postgres@127.0.0.1:1/postgres"], 1, "Error: "),
        (["engines", "--db", "mariadb://root@127.0.0.1:1/test"], 1, "Error: "),
    ],
)
def test_user_mistakes_are_one_line_without_traceback(args, code, message, tmp_path):
    result = dbladder_here(*args, cwd=tmp_path)
    assert result.returncode == code, result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(error_lines) == 1 and error_lines[0].startswith(message), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root can write anywhere, so permissions cannot be tested as root"
)
def test_read_only_folder_is_reported(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    result = dbladder("seed", "--db", f"sqlite:///{folder}/x.db")
    assert result.returncode == 1 and "permission denied" in result.stderr
