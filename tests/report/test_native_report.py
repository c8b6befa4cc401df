"""The native reference in the report: one sentence in the result section, from the result's block."""

from __future__ import annotations

from typing import Any

from report_support import fake_result, texts, with_ceiling

from dbladder.bench.native import attach
from dbladder.result.schema import RESULT_SCHEMA, problem

REFERENCE: dict[str, Any] = {
    "client": "pgbench",
    "version": "pgbench (PostgreSQL) 15.20",
    "command": "pgbench --no-vacuum --protocol=prepared --client=8 --jobs=2 --time=5 ... shop",
    "scripts": {"product.sql": "SELECT 1;\n"},
    "ops_per_s": 25_000.0,
    "operations": 125_000,
    "seconds": 5.0,
    "connections": 8,
    "processes": 2,
    "mix": {"product": 0.5, "page": 0.3, "order": 0.2},
    "sizes": {"products": 1000, "orders": 5000},
    "database": "postgresql:///shop?host=/var/run/postgresql",
    "engine": "postgresql",
    "server_version": "15.20",
    "measured_at": "2026-01-02T04:00:00+00:00",
}


def direct(ceiling_fails_from: int) -> dict[str, Any]:
    result = with_ceiling(fake_result("postgresql", (1, 1, 1)), ceiling_fails_from)
    result["config"]["target"] = "direct"
    result["native"] = attach(result, REFERENCE)
    assert problem(result, RESULT_SCHEMA) is None, problem(result, RESULT_SCHEMA)
    return result


def test_the_result_section_says_how_close_direct_mode_came() -> None:
    result = direct(ceiling_fails_from=2)  # 500 and 1,000 req/s held, 1,500 failed
    assert result["native"]["ratio"] == 0.04
    md, html = texts([result])
    line = (
        "Direct mode reached 1,000 req/s, 0.04 of the native client's 25,000 ops/s flat out "
        "(pgbench (PostgreSQL) 15.20, -M prepared, 8 connections on 2 thread(s); 5 s on the same "
        "database, 2026-01-02)."
    )
    result_section = md.split("\n## ")[1]
    assert result_section.startswith("Result") and line in result_section
    assert "25,000 ops/s flat out" in html


def test_a_ceiling_no_level_failed_at_is_a_lower_bound_and_no_block_no_line() -> None:
    md, _ = texts([direct(ceiling_fails_from=3)])
    assert "Direct mode reached at least 1,500 req/s (no level failed), at least 0.06 of" in md
    assert "Direct mode" not in texts([fake_result("postgresql")])[0]


def test_several_runs_each_get_their_named_line() -> None:
    first, second = direct(2), direct(3)
    md, _ = texts([first, second])
    assert md.count("Direct mode reached") == 2 and "run 1.** Direct mode reached 1,000" in md


def test_the_sentence_says_on_which_cpus_each_side_ran() -> None:
    result = direct(ceiling_fails_from=2)
    result["native"] = attach(result, {**REFERENCE, "cpus": "0"})
    unplaced = {"cpus": None, "memory": None}
    result["placement"] = {
        "generator": {"cpus": "0", "memory": None},
        "service": unplaced,
        "database": {"cpus": "1", "memory": None},
        "drop_caches": False,
    }
    assert problem(result, RESULT_SCHEMA) is None, problem(result, RESULT_SCHEMA)
    md, _ = texts([result])
    assert (
        "2026-01-02). Placed: direct mode's generator on CPU 0, the native client on CPU 0, "
        "the database on CPU 1." in md
    )
