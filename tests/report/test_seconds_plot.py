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


def test_the_report_shows_the_probes_of_a_rate_probed_again_and_on_what_the_ceiling_rests():
    result = searched(False)
    del result["search"]["rests_on_a_stall"]
    result["search"]["probed_again"] = [
        {"rate_rps": 500, "levels": [1, 2], "because": "the first probe", "failed_again": False}
    ]
    words = "1,500 req/s failed twice (levels 3 and 4; probed again after a stall): a failure that repeats"
    result["search"]["ceiling_rests_on"] = {
        "rate_rps": 1500,
        "levels": [3, 4],
        "failed_twice": True,
        "words": words,
    }
    md, _ = texts([result])
    assert "500 req/s probed again (levels 1 and 2) after the first probe: held the second time, so it" in md
    assert f"The ceiling rests on {words}." in md
    assert "Level 2: the second probe of 500 req/s (level 1 failed it: the first probe); held, so 500" in md
    summary = terminal.summary(result)
    assert f"rests on {words}" in summary
    assert "again    500 req/s probed again (levels 1 and 2) after the first probe" in summary


def test_a_wide_p95_interval_is_shown_beside_its_level_and_a_narrow_one_is_not():
    result = fake_result()
    wide, narrow = result["levels"][0], result["levels"][1]
    wide["p95_ms"], wide["p95_interval"] = 40.0, {"low_ms": 30.0, "high_ms": 300.0, "n": 80, "coverage": 0.96}
    narrow["p95_ms"], narrow["p95_interval"] = (
        20.0,
        {"low_ms": 19.0, "high_ms": 21.0, "n": 4000, "coverage": 0.95},
    )
    md, _ = texts([result])
    rows = levels_table(md)
    assert [row["p95 at 95 % ms"] for row in rows] == ["30-300", "", ""]
    assert "p95 interval 30-300 ms at 95 % confidence (from 80 requests)" in terminal.level_line(wide)
    assert "p95 interval" not in terminal.level_line(narrow)
    md, _ = texts([fake_result()])  # an older result: no interval, no column
    assert "p95 at 95 %" not in levels_table(md)[0]
