"""`dbladder bench --native`: its output, the block it writes into a direct-mode result, its errors."""

from __future__ import annotations

import json
import subprocess
from functools import partial
from pathlib import Path

import pytest
from cli_support import dbladder as run_dbladder
from cli_support import dbladder_here

from dbladder.report.bundle import load_bundle

TINY = ("--size", "products=300", "--size", "orders=600")


dbladder = partial(run_dbladder, timeout=180)


def one_line_error(done: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and words in last, done.stderr


def test_no_shop_data_is_one_line_saying_how_to_seed(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/shop.db"
    done = dbladder_here("bench", "--native", "--db", url, "--seconds", "1")
    one_line_error(done, 1, f"no shop data; seed it first: dbladder seed --db {url}")
    assert not (tmp_path / "shop.db").exists()


def test_a_missing_client_is_one_line_before_anything_runs(tmp_path) -> None:
    # No program on the PATH: pgbench cannot be found (the server is never asked).
    done = dbladder_here(
        "bench", "--native", "--db", "postgresql://postgres@127.0.0.1:1/none", env={"PATH": str(tmp_path)}
    )
    one_line_error(done, 1, "pgbench is not on the PATH")
    assert "apt-get install postgresql-client" in done.stderr


def test_options_that_do_not_go_together_are_usage_errors(tmp_path) -> None:
    one_line_error(dbladder_here("bench", "--result", str(tmp_path)), 2, "--result goes with --native")
    one_line_error(
        dbladder_here("bench", "--native", "--journal-test", "--repeat", "2"),
        2,
        "--repeat, --journal-test do not apply to --native",
    )
    one_line_error(
        dbladder_here("bench", "--native", "--result", str(tmp_path / "nothing")), 2, "no bundle at"
    )
    done = dbladder_here("bench", "--native", "--db", f"sqlite:///{tmp_path}/s.db", "--seconds", "0")
    assert done.returncode == 2 and "seconds must be from 0.5" in done.stderr


@pytest.mark.slow
def test_scale_seeds_the_shop_and_json_prints_the_block(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/shop.db"
    done = dbladder(
        "bench", "--native", "--db", url, "--scale", "0.003", "--seconds", "1", "--warmup", "0", "--json"
    )
    assert done.returncode == 0, done.stderr
    block = json.loads(done.stdout)
    assert block["client"] == "apsw loop" and block["ops_per_s"] > 0
    assert block["sizes"] == {"products": 300, "orders": 3000}
    assert "direct_rps" not in block  # no result given


@pytest.mark.slow
def test_a_direct_run_gets_its_native_block_and_its_report_the_line(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/shop.db"
    assert dbladder("seed", "--db", url, *TINY).returncode == 0
    run = dbladder(
        "run", "--db", url, "--target", "direct", "--writes", "0", "--no-seed",
        "--start", "500", "--steps", "1", "--hold", "1", "--warmup", "0.2", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    done = dbladder(
        "bench", "--native", "--db", url, "--seconds", "1", "--warmup", "0", "--result", str(tmp_path / "run")
    )
    assert done.returncode == 0, done.stderr
    result = load_bundle(tmp_path / "run").runs[0]  # checked against the JSON Schema as it loads
    block = result["native"]
    assert block["direct_rps"] == result["ceiling_rps"] == 500
    assert block["ratio"] == pytest.approx(500 / block["ops_per_s"], rel=0.01)
    # The one level held, so the ceiling and the ratio are lower bounds, and the line says so.
    line = f"Direct mode reached at least 500 req/s (no level failed), at least {block['ratio']:.2g} of"
    assert f"direct   {line}" in done.stdout
    assert line in (tmp_path / "run" / "report.md").read_text()
    rebuilt = dbladder("report", str(tmp_path / "run"), "--out", str(tmp_path / "again"))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert line in (tmp_path / "again" / "report.md").read_text()
    assert f"{block['ops_per_s']:,.0f} ops/s flat out" in Path(tmp_path / "again" / "report.html").read_text()
    # The same result cannot take another engine's reference.
    other = dbladder(
        "bench",
        "--native",
        "--db",
        "postgresql:///shop?host=/var/run/postgresql",
        "--result",
        str(tmp_path / "run"),
    )
    one_line_error(other, 2, "it ran on sqlite, not postgresql")
