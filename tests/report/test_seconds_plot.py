"""Every level second by second in the report and the terminal: the plot over time, and the diagnosis
beside each level's row (report/seconds_plot.py, report/document.py, report/terminal.py)."""

from __future__ import annotations

import json

from report_support import fake_result, levels_table, texts

from dbladder.report import terminal
from dbladder.report.bundle import build_reports


def seconds(p95s: list[float]) -> list[dict]:
    return [
        {
            "t": t,
            "sent": 100,
            "answered": 100,
            "failed": 0,
            "p50_ms": p / 2,
            "p95_ms": p,
            "p99_ms": p,
            "max_ms": p,
        }
        for t, p in enumerate(p95s)
    ]


def diagnosed() -> dict:
    result = fake_result()
    for level in result["levels"]:
        level["seconds"] = seconds([3.0, 3.0, 3.0])
    stalled = result["levels"][2]
    stalled["seconds"] = seconds([3.0, 900.0, 3.0])
    stalled["passed"], stalled["reasons"] = False, ["p95 99.0 ms is not under 50 ms"]
    stalled["diagnosis"] = {
        "kind": "stall",
        "line": "a stall of 0.9 s at 1.1 s into the level; p95 over the other 2 s was at most 3.0 ms",
        "resource": None,
        "evidence": {"stall_start_s": 1.1, "stall_length_s": 0.9},
    }
    return result


def test_the_report_plots_every_level_second_by_second_with_the_pass_mark_and_the_level_lines():
    _, html = texts([diagnosed()])
    assert 'data-plot="seconds"' in html
    plot = html.split('data-plot="seconds"', 1)[1].split("</figure>", 1)[0]
    assert 'data-mark="pass"' in plot and plot.count('data-mark="level"') == 2 * 3  # 3 level lines, 2 panels
    assert plot.count('data-failed="true"') == 2  # the stalled second, in each panel
    assert "level 3, second 2: p95 900 ms" in plot


def test_a_diagnosed_level_says_why_beside_its_row_in_the_summary_and_in_the_terminal():
    result = diagnosed()
    md, _ = texts([result])
    rows = levels_table(md)
    assert [row["why"] for row in rows] == ["", "", "stall"]
    line = "Level 3, why: a stall of 0.9 s at 1.1 s into the level"
    assert md.count(line) == 2  # under the level's table, and in the result's summary
    assert "why: a stall of 0.9 s at 1.1 s" in terminal.level_line(result["levels"][2])


def test_a_result_without_seconds_has_no_plot_over_time():
    _, html = texts([fake_result()])
    assert 'data-plot="seconds"' not in html


def searched(rests_on_a_stall: bool) -> dict:
    result = fake_result("sqlite", (1, 1, 1))
    result["config"]["search"] = {"start": 500, "factor": 2, "resolution": 0.05, "hold": 1.5, "warmup": 0.5}
    result["search"] = {"held_rps": 1000, "failed_rps": 1500, "probes": 3, "stopped_because": "budget"}
    result["search"]["rests_on_a_stall"] = rests_on_a_stall
    return result


def test_the_report_says_when_the_ceiling_still_rests_on_a_stall_and_when_a_rerun_settled_it():
    md, _ = texts([searched(True)])
    assert "the ceiling still rests on a stall: the probe above it failed by a stall, and again" in md
    assert "the ceiling still rests on a probe that failed by a stall" in terminal.summary(searched(True))
    md, _ = texts([searched(False)])
    assert "a probe that failed by a stall was run once more, and its second result is the one" in md
    assert "stall " not in terminal.summary(searched(False))


def test_a_window_s_last_part_second_is_drawn_at_its_middle_as_a_rate_not_a_drop():
    result = diagnosed()
    level = result["levels"][0]
    level["seconds"] = seconds([3.0, 3.0, 3.0])
    level["seconds"][-1] |= {"length_s": 0.5, "sent": 50, "answered": 50}
    _, html = texts([result])
    plot = html.split('data-plot="seconds"', 1)[1].split("</figure>", 1)[0]
    assert "level 1, second 3 (its last 0.5 s): p95 3 ms, sent 50, answered 50" in plot
    answered = plot.split("answers per second in each second", 1)[1]
    # The level's window starts at 1 s: the part-second [3, 3.5) is drawn at 3.25, and its 50
    # answers in half a second are 100 a second, as many as the whole seconds before it.
    assert 'data-x="3.25" data-y="100" data-failed="false"><title>SQLite 3.54.1, level 1, second 3 (' in (
        answered
    )


def test_a_schema_2_bundle_with_whole_seconds_only_still_renders_its_plot(tmp_path):
    result = diagnosed() | {"schema": "dbladder.result/2"}
    for level in result["levels"]:
        for second in level["seconds"]:
            second.pop("length_s", None)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "result.json").write_text(json.dumps(result))
    build_reports([tmp_path / "old"], tmp_path / "again")
    html = (tmp_path / "again" / "report.html").read_text()
    assert 'data-plot="seconds"' in html and "level 3, second 2: p95 900 ms" in html
