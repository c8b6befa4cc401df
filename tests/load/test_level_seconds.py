"""Every level second by second (load/recorder.py's LevelSecond): what each second of a level's
measured window sent, answered and failed, merged over processes as the levels are."""

from __future__ import annotations

from test_generator import run_ladder
from test_http_client import ScriptedServer, run

from dbladder.histogram import Histogram
from dbladder.load.clock import FakeClock
from dbladder.load.recorder import LevelSecond, measured_seconds, merge_seconds, merge_snapshots
from dbladder.plans import Ladder
from dbladder.plans.levels import Level


def test_each_second_of_the_measured_window_holds_what_was_due_in_it_over_every_process() -> None:
    async def main() -> list[dict]:
        async with ScriptedServer() as server:
            return [
                await run_ladder(
                    Ladder(90, 30, 2, 3.0, warmup=1.0), server.port, FakeClock(), part=k, parts=3
                )
                for k in range(3)
            ]

    parts = run(main)
    assert [len(level["seconds"]) for level in parts[0]["levels"]] == [2, 2]
    assert [second["sent"] for second in parts[0]["levels"][0]["seconds"]] == [30, 30]
    merged = merge_snapshots(parts)
    for level, rate in zip(merged["levels"], (90, 120), strict=True):
        seconds = level["seconds"]
        assert [second["sent"] for second in seconds] == [rate, rate]
        assert [second["failed"] for second in seconds] == [0, 0]
        # The seconds split the level's answers: every one due in the window is in one second.
        latencies = [Histogram.from_dict(second["latency_from_due"]) for second in seconds]
        assert sum(h.count for h in latencies) == Histogram.from_dict(level["latency_from_due"]).count
        assert sum(second["answered"] for second in seconds) == level["answered_in_window"]


def test_a_part_second_at_the_end_of_a_window_is_no_second_of_it() -> None:
    assert measured_seconds(Level(0, 10, 0.0, 4.0, 0.5)) == 3
    assert measured_seconds(Level(0, 10, 0.0, 10.0, 2.0)) == 8
    assert measured_seconds(Level(0, 10, 0.0, 1.0, 0.5)) == 1


def test_a_seconds_schedule_lag_is_its_latest_send_merged_as_the_largest_of_any_process() -> None:
    first, second = LevelSecond(), LevelSecond()
    for lag in (120, 4_000, 900):
        first.sent_late(lag)
    second.sent_late(7_500)
    assert (first.sent, first.lag_max) == (3, 4_000)
    merged = merge_seconds([[first.to_dict()], [second.to_dict()]])
    assert (merged[0]["sent"], merged[0]["lag_max_us"]) == (4, 7_500)
    # A process's seconds from before the lag was kept merge as no lag.
    older = {key: value for key, value in second.to_dict().items() if key != "lag_max_us"}
    assert merge_seconds([[older]])[0]["lag_max_us"] == 0
