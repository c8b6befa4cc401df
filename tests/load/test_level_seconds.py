"""Every level second by second (load/recorder.py's LevelSecond): what each second of a level's
measured window sent, answered and failed, merged over processes as the levels are."""

from __future__ import annotations

from test_generator import run_ladder
from test_http_client import ScriptedServer, run

from dbladder.histogram import Histogram
from dbladder.load.clock import FakeClock
from dbladder.load.merge import merge_seconds, merge_snapshots
from dbladder.load.recorder import LevelSecond, measured_seconds, second_lengths
from dbladder.outcomes import OUTCOMES
from dbladder.plans import Ladder
from dbladder.plans.planned_levels import PlannedLevel
from dbladder.result.level_rows import level_row
from dbladder.result.passmark import PassMark


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


def test_a_window_that_does_not_end_on_a_whole_second_ends_with_a_part_second() -> None:
    assert measured_seconds(PlannedLevel(0, 10, 0.0, 4.0, 0.5)) == 4
    assert second_lengths(PlannedLevel(0, 10, 0.0, 4.0, 0.5)) == [1.0, 1.0, 1.0, 0.5]
    assert second_lengths(PlannedLevel(0, 10, 0.0, 10.0, 2.0)) == [1.0] * 8
    assert second_lengths(PlannedLevel(0, 10, 0.0, 1.0, 0.5)) == [0.5]
    # 10 s held with a warm-up of 0.01 s: nine whole seconds and 0.99 s.
    assert second_lengths(PlannedLevel(0, 10, 0.0, 10.0, 0.01)) == [1.0] * 9 + [0.99]
    # A float's rounding at the end is no second of its own: these spans are 3 -+ 4e-16.
    assert second_lengths(PlannedLevel(0, 10, 1.1, 3.0, 0.0)) == [1.0] * 3
    assert second_lengths(PlannedLevel(0, 10, 0.1 * 23, 3.0, 0.0)) == [1.0] * 3


def test_the_seconds_add_up_to_the_levels_requests_a_part_second_and_drops_included() -> None:
    # 1.5 s held after a warm-up of 0.5 s: seconds of 1 and 0.5 s. A server that holds every
    # answer 0.2 s behind two connections drops most requests: the seconds count those too.
    async def main() -> dict:
        async with ScriptedServer(delay=0.2) as server:
            return await run_ladder(Ladder(40, 20, 1, 2.0, warmup=0.5), server.port, in_flight=2)

    snapshot = merge_snapshots([run(main)])
    for level in snapshot["levels"]:
        seconds = level["seconds"]
        assert [second["length_s"] for second in seconds] == [1.0, 0.5]
        row = level_row(level, PassMark())
        due = [second["sent"] + second["dropped"] for second in seconds]
        assert sum(due) == row["requests"] == sum(level["outcomes"][cause] for cause in OUTCOMES)
        assert due == [level["rate"], level["rate"] / 2]  # evenly due: the part-second its share
        assert sum(second["dropped"] for second in seconds) == row["dropped"] > 0
        assert sum(second["answered"] for second in seconds) == level["answered_in_window"]
        assert [second["length_s"] for second in row["seconds"]] == [1.0, 0.5]


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
