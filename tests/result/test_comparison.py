"""The typed comparison: compare.json read and written back unchanged, its runs typed results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbladder.errors import UnknownBundleVersion
from dbladder.result.comparison import Comparison, DatabaseOutcome, per_database, read_comparison
from dbladder.result.run import RunResult
from dbladder.result.schema import COMPARE_SCHEMA, problem

RUN = json.loads((Path(__file__).parent / "fixtures" / "previous-release-users.json").read_text())
DOCUMENT = {
    "schema": COMPARE_SCHEMA,
    "kind": "compare",
    "dbladder_version": "0.1.0",
    "created_at": "2026-01-02T03:04:05+00:00",
    "status": "complete",
    "databases": [{"label": "SQLite", "db_url": "sqlite:///a.db", "transport": None}],
    "runs_per_database": 1,
    "runs": [RUN | {"label": "SQLite", "run": 1}],
}


def test_a_comparison_round_trips_and_its_runs_are_typed():
    comparison = read_comparison(DOCUMENT)
    assert comparison.to_json() == DOCUMENT
    assert problem(comparison.to_json(), COMPARE_SCHEMA) is None
    assert isinstance(comparison.runs[0], RunResult) and comparison.runs[0].label == "SQLite"
    assert comparison.databases is not None and comparison.databases[0].db_url == "sqlite:///a.db"
    assert Comparison.from_json(DOCUMENT) == comparison


def test_a_run_of_an_unknown_schema_is_named_in_one_line():
    document = DOCUMENT | {"runs": [RUN | {"schema": "dbladder.result/1", "dbladder_version": "0.0.1"}]}
    written = r"runs\[0\] is schema 'dbladder\.result/1', .* written by dbladder 0\.0\.1"
    with pytest.raises(UnknownBundleVersion, match=written):
        read_comparison(document)
    with pytest.raises(UnknownBundleVersion, match=r"is schema 'dbladder\.compare/1'"):
        read_comparison(DOCUMENT | {"schema": "dbladder.compare/1"})


def test_a_database_meets_the_expectations_when_every_run_does():
    def run(label: str, number: int, *lines: str) -> RunResult:
        checks = [{"line": line, "met": False} for line in lines] + [{"line": "fine", "met": True}]
        return RunResult.from_json(
            {"label": label, "run": number, "expectations": {"met": not lines, "checks": checks}}
        )

    runs = [run("sqlite", 1), run("postgresql", 1, "p95 was 9 ms"), run("sqlite", 2), run("postgresql", 2)]
    sqlite, postgresql, mariadb = per_database(["sqlite", "postgresql", "mariadb"], runs)
    assert sqlite.to_json() == {"met": True, "runs": 2, "unmet": []}
    assert postgresql.to_json() == {"met": False, "runs": 2, "unmet": ["run 1: p95 was 9 ms"]}
    assert mariadb.to_json() == {
        "met": False,
        "runs": 0,
        "unmet": ["no run finished, so whether it meets the expectations is unknown"],
    }


def test_a_database_outcome_reads_as_a_typed_part():
    document = DOCUMENT | {
        "databases": [
            {
                "label": "SQLite",
                "db_url": "sqlite:///a.db",
                "expectations": {"met": False, "runs": 1, "unmet": ["run 1: x"]},
            }
        ]
    }
    comparison = read_comparison(document)
    assert comparison.to_json() == document
    assert comparison.databases is not None
    assert comparison.databases[0].expectations == DatabaseOutcome(met=False, runs=1, unmet=("run 1: x",))
