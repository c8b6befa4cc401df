"""The report's Expectations table: one row per check of each run, a failed row per unmet one."""

from __future__ import annotations

from dbladder.report.blocks import Heading, Paragraph, TableBlock
from dbladder.report.expectations import expectations_section
from dbladder.result.expectations import AtRate, Expectations, check
from dbladder.result.run import RunResult

LEVEL = {
    "offered_rps": 500,
    "p95_ms": 12.0,
    "p99_ms": 30.0,
    "fail_pct": 0.0,
    "passed": True,
    "state": "finished",
    "operations": {"create": {"requests": 90, "p95_ms": 41.0, "p99_ms": 60.0, "fail_pct": 0.0}},
}


def result(label: str | None = None, run: int | None = None, **bounds) -> RunResult:
    document = {"ceiling_rps": 500, "levels": [LEVEL]}
    checked = check(Expectations(400, **bounds), document)
    return RunResult.from_json({"label": label, "run": run, "expectations": checked.to_json()})


def test_one_run_has_a_row_per_check_and_the_unmet_ones_marked():
    blocks = expectations_section([result(p99_ms=(AtRate(25, 500),), p95_ms=(AtRate(40, None, "create"),))])
    heading, words, table = blocks
    assert (
        heading == Heading(3, "Expectations")
        and isinstance(words, Paragraph)
        and isinstance(table, TableBlock)
    )
    assert "2 of 3 expectations not met: the command exited with code 3." in words.text
    assert table.rows == [
        ["ceiling at least 400 req/s", "500 req/s", "", "met"],
        ["p95 of create at the ceiling at most 40 ms", "41 ms", "500", "not met"],
        ["p99 at 500 req/s at most 25 ms", "30 ms", "500", "not met"],
    ]
    assert table.failed == [False, True, True]


def test_a_comparison_names_each_run_and_a_result_without_expectations_has_no_section():
    both = [result("sqlite", 1, p99_ms=(AtRate(35),)), result("postgresql", 1, p99_ms=(AtRate(25),))]
    table = expectations_section(both)[2]
    assert [row[0] for row in table.rows] == ["sqlite, run 1"] * 2 + ["postgresql, run 1"] * 2
    assert table.failed == [False, False, False, True]
    assert expectations_section([RunResult.from_json({"levels": []})]) == []
