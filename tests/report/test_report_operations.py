"""Per-operation figures: merged across processes, in each level row, in the report's table and plot."""

from __future__ import annotations

import re

from report_support import fake_result, snapshot

from dbladder.histogram import Histogram
from dbladder.load.merge import merge_levels
from dbladder.outcomes import OUTCOMES
from dbladder.report import document, html, markdown
from dbladder.result.level_rows import level_row
from dbladder.result.passmark import PassMark


def operation(latency_ms: float, answers: int, failed: int = 0) -> dict:
    """One operation's share of a level: `answers` 2xx at exactly `latency_ms`, `failed` 5xx at 1 ms."""
    histogram = Histogram()
    for _ in range(answers):
        histogram.record(int(latency_ms * 1000))
    for _ in range(failed):
        histogram.record(1000)
    outcomes = dict.fromkeys(OUTCOMES, 0)
    outcomes["2xx"], outcomes["5xx"] = answers, failed
    return {"latency_from_due": histogram.to_dict(), "outcomes": outcomes}


def level(index: int, rate: float, read_ms: float, write_ms: float, write_failed: int) -> dict:
    part = snapshot(index, rate, read_ms, failed=write_failed)
    part.update(abandoned=0, warmup_requests=0, wall_seconds=3.0)
    part["operations"] = {
        "read": operation(read_ms, 80),
        "write": operation(write_ms, 20 - write_failed, write_failed),
    }
    return part


def test_operations_merge_across_processes_and_reach_the_level_row() -> None:
    merged = merge_levels([level(0, 100, 2.0, 30.0, 0), level(0, 100, 2.0, 90.0, 4)])
    row = level_row(merged, PassMark())
    read, write = row["operations"]["read"], row["operations"]["write"]
    assert (read["requests"], write["requests"]) == (160, 40)
    # The write's 36 answers: half at 30 ms, half at 90 ms (less 4 failures at 1 ms). The histogram's
    # relative error is under 1 %.
    assert abs(write["p95_ms"] - 90.0) <= 0.9 and abs(read["p95_ms"] - 2.0) <= 0.02
    assert write["fail_pct"] == 10.0 and write["failures"] == {"5xx": 4} and read["fail_pct"] == 0.0


def test_the_report_has_a_table_and_a_plot_by_operation() -> None:
    levels = [
        level_row(level(i, 500.0 * (i + 1), 2.0, ms, failed), PassMark())
        for i, (ms, failed) in enumerate(((10, 0), (40, 0), (200, 3)))
    ]
    result = fake_result(levels=levels)
    report = document.build([result])
    tables = [block for block in report.blocks if getattr(block, "kind", "") == "operations"]
    assert len(tables) == 1
    assert [row[:2] for row in tables[0].rows] == [
        [str(i), name] for i in (1, 2, 3) for name in ("read", "write")
    ]
    assert tables[0].rows[-1][3:8] == ["200", "200", "200", "15.00", "5xx 3"]
    assert tables[0].failed == [False, False, False, False, True, True]
    text = markdown.render(report)
    assert "| 3 | write | 20 | 200 | 200 | 200 | 15.00 | 5xx 3 |" in text
    page = html.render(report)
    plot = page[page.index('data-plot="operations"') :]
    plot = plot[: plot.index("</figure>")]
    writes = re.findall(r'data-key="write".*?</g>', plot, re.S)
    assert writes and [float(y) for y in re.findall(r'data-y="([0-9.]+)"', writes[0])] == [10.0, 40.0, 200.0]


def test_levels_csv_has_a_column_per_operation_figure() -> None:
    from dbladder.report.csvfiles import levels_csv
    from dbladder.report.runs import rounds_of

    levels = [level_row(level(0, 500.0, 2.0, 40.0, 2), PassMark())]
    run = rounds_of([fake_result(levels=levels)])[0].runs[0]
    header, first = levels_csv([(run, "quick")]).splitlines()[:2]
    row = dict(zip(header.split(","), first.split(","), strict=True))
    assert (row["operations_write_requests"], row["operations_write_fail_pct"]) == ("20", "10.0")
    assert float(row["operations_write_p95_ms"]) == 40.0
