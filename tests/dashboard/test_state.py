"""The dashboard's document, folded from the run's events: live points replaced by a level's final
seconds, rounds told apart, counts per operation that only grow, and /metrics as OpenMetrics."""

from __future__ import annotations

import json

from dashboard_support import level_row, live_view, second
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from dbladder.dashboard import DashboardState
from dbladder.dashboard.metrics import metrics_text


def samples(state: DashboardState) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the state's /metrics text, parsed by prometheus_client's OpenMetrics parser."""
    text = metrics_text(state).decode()
    assert text.endswith("# EOF\n")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_live_seconds_become_points_and_the_levels_final_seconds_replace_them():
    state = DashboardState("dbladder run", {"p95_ms": 50.0, "max_fail_pct": 1.0})
    # 100 answers at 1 ms and 1 at 20 ms: p50 1 ms, p99 1 ms (rank 100 of 101), within the
    # histogram's bucket width.
    state.live(live_view(0, 2.5, (second(0, 101, [1000] * 100 + [20_000]), second(1, 100, [2000] * 100))))
    run = state.snapshot()["runs"][0]
    assert [(point["time"], point["sent"], point["live"]) for point in run["points"]] == [
        (1.0, 101, True),
        (2.0, 100, True),
    ]
    assert abs(run["points"][0]["p50_ms"] - 1.0) < 0.05 and abs(run["points"][1]["p95_ms"] - 2.0) < 0.05
    assert run["current"]["level"] == 0 and run["cpu"][0]["service"] == 40.0
    state.level(level_row(0, reads=600, writes=300))
    run = state.snapshot()["runs"][0]
    assert len(run["points"]) == 9 and not any(point["live"] for point in run["points"])
    assert run["points"][0]["time"] == 1.0  # start_s 0 + warm-up 1
    assert run["levels"][0]["cpu_pct"] == {"generator": 5.0, "service": 40.0, "database": None}
    assert run["current"] is None


def test_a_comparison_gets_a_run_per_round_and_its_verdict():
    state = DashboardState("dbladder compare")
    for label in ("sqlite", "postgresql"):
        state.message(f"run 1 of 1: {label}")
        state.live(live_view(0, 1.0))
        state.level(level_row(0, 10, 5))
    document = state.snapshot()
    assert [run["label"] for run in document["runs"]] == ["sqlite run 1", "postgresql run 1"]
    assert [len(run["levels"]) for run in document["runs"]] == [1, 1]
    state.end("finished")
    assert state.snapshot()["ended"] is True


def test_a_level_number_going_back_starts_another_round():
    state = DashboardState("dbladder run")
    state.level(level_row(0, 1, 1))
    state.level(level_row(1, 1, 1))
    state.live(live_view(0, 1.0))
    assert len(state.snapshot()["runs"]) == 2


def test_the_json_is_made_once_per_version():
    state = DashboardState("dbladder run")
    version, text = state.text()
    assert state.text()[1] is text  # the same object: not serialised again for a second reader
    state.message("seeding")
    assert state.text()[0] == version + 1 and json.loads(state.text()[1])["messages"] == ["seeding"]


def test_metrics_count_the_finished_levels_and_the_level_in_progress():
    state = DashboardState("dbladder run")
    state.level(level_row(0, reads=600, writes=300, write_failures=7))
    state.live(live_view(1, 3.0, read=250, write=90))
    found = samples(state)
    run = (("run", "run"),)
    assert found[("dbladder_requests_total", (("operation", "read"), *run))] == 600 + 250
    assert found[("dbladder_requests_total", (("operation", "write"), *run))] == 300 + 90
    assert found[("dbladder_failures_total", (("operation", "write"), *run))] == 7
    assert found[("dbladder_level", run)] == 2
    assert found[("dbladder_offered_rate", run)] == 200.0
    quantile = ("dbladder_level_latency_seconds", (("operation", "read"), ("quantile", "0.99"), *run))
    assert found[quantile] == 0.008
    # The level finishes with more answers than its last live view saw: the counter still grows.
    state.level(level_row(1, reads=270, writes=95))
    found = samples(state)
    assert found[("dbladder_requests_total", (("operation", "read"), *run))] == 600 + 270
    assert found[("dbladder_level", run)] == 0


def test_a_window_s_last_part_second_is_a_rate_over_its_length_not_a_drop():
    state = DashboardState("dbladder run", {"p95_ms": 50.0, "max_fail_pct": 1.0})
    row = level_row(0, reads=600, writes=300)
    row["seconds"][-1] = row["seconds"][-1] | {"length_s": 0.5}
    whole = row["seconds"][0]
    state.level(row)
    points = state.snapshot()["runs"][0]["points"]
    assert points[0]["sent"] == whole["sent"]
    assert points[-1]["sent"] == round(row["seconds"][-1]["sent"] / 0.5, 1)
    assert points[-1]["answered"] == round(row["seconds"][-1]["answered"] / 0.5, 1)
