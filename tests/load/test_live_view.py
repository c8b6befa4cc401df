"""`dbladder.load.live`: one process's view of the level in progress, and the fleet's merge of them."""

from __future__ import annotations

import pytest

from dbladder.histogram import Histogram
from dbladder.load.live_view import LIVE_SECONDS, LiveView, live_view, merge_live
from dbladder.load.recorder import Recorder
from dbladder.plans import PlannedLevel

# Level 0: 100 req/s for 4 s from the run start, the first second a warm-up.
LEVEL = PlannedLevel(0, 100.0, 0.0, 4.0, 1.0)


def answered(recorder: Recorder, latencies_ms: list[float], operation: int = 0, warmup: bool = False) -> None:
    """Requests of level 0 sent and answered 2xx in these times (in the warm-up, or in the first
    measured second), filed as an executor files them."""
    record = (recorder.warmups if warmup else recorder.levels)[0]
    for ms in latencies_ms:
        record.lag.record(100)
        record.from_due.record(int(ms * 1000))
        record.outcomes["2xx"] += 1
        record.operations[operation].from_due.record(int(ms * 1000))
        record.operations[operation].outcomes["2xx"] += 1
        if not warmup:
            second = record.seconds[0]
            second.sent += 1
            second.answered += 1
            second.latency.record(int(ms * 1000))


def test_there_is_no_view_outside_the_levels() -> None:
    recorder = Recorder([LEVEL])
    assert live_view(recorder, -1, 0.5) is None
    assert live_view(recorder, 1, 0.5) is None


def test_a_view_in_the_warm_up_reads_the_warm_up_and_carries_no_second() -> None:
    recorder = Recorder([LEVEL], operations=("read", "write"))
    answered(recorder, [2.0] * 40, warmup=True)
    view = live_view(recorder, 0, 0.5)
    assert view is not None
    assert view.warming_up and view.elapsed == pytest.approx(0.5)
    assert view.offered_rate == pytest.approx(80) and view.achieved_rate == pytest.approx(80)
    assert view.seconds == ()
    # The operations' figures are the measured window's: nothing yet during the warm-up.
    assert view.operations["read"] == {"requests": 0, "failures": 0, "p50_ms": 0, "p95_ms": 0, "p99_ms": 0}


def test_a_view_of_the_measured_window_has_its_rates_percentiles_and_whole_seconds() -> None:
    recorder = Recorder([LEVEL], operations=("read", "write"))
    answered(recorder, [1.0] * 90 + [50.0] * 10, operation=0)
    recorder.levels[0].outcomes["timeout"] += 1  # a failure: counted, never in the latencies
    # 1.5 s into the measured window: second 0 ended half a second ago, so it is carried.
    view = live_view(recorder, 0, 2.5)
    assert view is not None and not view.warming_up
    assert (view.level, view.rate, view.measured_from, view.failures) == (0, 100.0, 1.0, 1)
    assert view.elapsed == pytest.approx(1.5)
    assert view.offered_rate == pytest.approx(100 / 1.5)
    assert view.achieved_rate == pytest.approx(100 / 1.5)
    assert view.p50_ms == pytest.approx(1.0, rel=0.02)
    assert view.p95_ms == pytest.approx(50.0, rel=0.02)
    assert view.p50_ms <= view.p95_ms <= view.p99_ms
    ((second),) = view.seconds
    assert (second["t"], second["sent"], second["answered"]) == (0, 100, 100)
    assert Histogram.from_dict(second["latency_from_due"]).count == 100
    assert view.operations["read"]["requests"] == 100
    assert view.operations["read"]["p95_ms"] == pytest.approx(50.0, rel=0.02)
    assert view.operations["write"]["requests"] == 0
    # A tenth of a second after second 0 ended, its late answers may still come: not carried yet.
    early = live_view(recorder, 0, 2.1)
    assert early is not None and early.seconds == ()


def test_a_view_carries_at_most_its_last_whole_seconds() -> None:
    recorder = Recorder([LEVEL])
    # 2.9 s into a 3 s window: seconds 0 and 1 have ended, and two are all a view carries.
    view = live_view(recorder, 0, 3.9)
    assert view is not None and LIVE_SECONDS == 2
    assert [second["t"] for second in view.seconds] == [0, 1]


def test_to_dict_is_its_fields_shallow() -> None:
    recorder = Recorder([LEVEL])
    answered(recorder, [1.0] * 10)
    view = live_view(recorder, 0, 2.5)
    assert view is not None
    as_dict = view.to_dict()
    assert set(as_dict) == set(LiveView.__dataclass_fields__)
    assert as_dict["seconds"] is view.seconds and as_dict["operations"] is view.operations  # not copied
    assert LiveView(**as_dict) == view


def view(level: int, **figures: object) -> dict[str, object]:
    base = LiveView(level, 100.0, 1.0, False, 50.0, 49.0, 10.0, 1, measured_from=1.0).to_dict()
    return base | figures


def second(t: int, sent: int, latency_ms: float) -> dict[str, object]:
    latency = Histogram()
    latency.record_many([int(latency_ms * 1000)] * sent)
    return {"t": t, "sent": sent, "answered": sent, "failed": 0, "latency_from_due": latency.to_dict()}


def test_merged_views_are_the_level_furthest_on_summed_and_their_worst_percentiles() -> None:
    behind = view(0, offered_rate=1000.0, failures=50)
    merged = merge_live(
        [
            view(1, elapsed=1.2, p95_ms=12.0, seconds=(second(0, 40, 2.0), second(1, 40, 3.0))),
            behind,
            view(1, elapsed=0.9, p95_ms=30.0, warming_up=True, seconds=(second(0, 60, 4.0),)),
        ]
    )
    assert (merged.level, merged.elapsed, merged.warming_up) == (1, 1.2, True)
    assert merged.offered_rate == 100.0 and merged.achieved_rate == 98.0  # the level behind left out
    assert (merged.p95_ms, merged.failures) == (30.0, 2)
    # Only the seconds every process has sent, merged exactly.
    ((merged_second),) = merged.seconds
    assert (merged_second["t"], merged_second["sent"]) == (0, 100)
    assert Histogram.from_dict(merged_second["latency_from_due"]).count == 100


def test_merged_operations_sum_their_counts_and_keep_the_worst_percentiles() -> None:
    figures = {"requests": 10, "failures": 1, "p50_ms": 1.0, "p95_ms": 5.0, "p99_ms": 9.0}
    other = {"requests": 30, "failures": 0, "p50_ms": 2.0, "p95_ms": 4.0, "p99_ms": 20.0}
    merged = merge_live([view(0, operations={"read": figures}), view(0, operations={"read": other})])
    assert merged.operations == {
        "read": {"requests": 40, "failures": 1, "p50_ms": 2.0, "p95_ms": 5.0, "p99_ms": 20.0}
    }


def test_a_levels_state_alone_is_its_snapshots_state() -> None:
    # The generator asks for the state every half second and builds the snapshot only once finished.
    recorder = Recorder([LEVEL])
    record = recorder.levels[0]
    seen = []
    for started, scheduled, in_flight, interrupted in [
        (False, False, 0, False),
        (True, False, 3, False),
        (True, True, 1, False),
        (True, True, 1, True),
        (True, True, 0, False),
    ]:
        record.started, record.scheduled, record.in_flight = started, scheduled, in_flight
        recorder.interrupted = interrupted
        assert recorder.level_state(0) == recorder.level_snapshot(0)["state"]
        seen.append(recorder.level_state(0))
    assert seen == ["pending", "running", "running", "interrupted", "finished"]
