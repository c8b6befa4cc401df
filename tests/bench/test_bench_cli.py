"""`dbladder bench`: exit codes and output through the installed entry point."""

from __future__ import annotations

import json

from cli_support import dbladder, dbladder_here


def test_bench_loads_and_prints_json(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/c.db"
    result = dbladder(
        "bench",
        "--db",
        url,
        "--scale",
        "0.002",
        "--seconds",
        "0.2",
        "--warmup",
        "0",
        "--no-reference",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report["rounds"]) == ["point_reads", "write_transactions", "batched_inserts"]
    assert report["rounds"]["point_reads"]["post_m1"] == 232_011
    assert report["data"] == {"users": 100, "posts": 2000}


def test_bench_without_data_is_a_one_line_error(tmp_path) -> None:
    result = dbladder_here("bench", "--db", f"sqlite:///{tmp_path}/c.db", "--seconds", "0.2")
    assert result.returncode == 1
    assert (
        result.stderr.strip().splitlines()[-1].startswith("Error: ") and "has no chirp data" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_bench_rejects_bad_options_with_exit_2(tmp_path) -> None:
    result = dbladder_here(
        "bench", "--db", f"sqlite:///{tmp_path}/c.db", "--seconds", "0", "--connections", "0"
    )
    assert result.returncode == 2
    assert "seconds must be" in result.stderr and "connections must be" in result.stderr
