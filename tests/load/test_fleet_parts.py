"""Fleets that share one run's parts (dbladder.load.fleet.parts): two fleets of real spawned
processes owning disjoint ranges send exactly what one fleet of every part sends, their level
snapshots merge into one histogram of every value, and a bad range is refused when it is made."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from test_direct import SHOP, SMALL

from dbladder.data.seeding import seed
from dbladder.engines import EngineOptions, opened
from dbladder.histogram import Histogram
from dbladder.load.fleet import (
    BadPartRange,
    Fleet,
    LevelDone,
    PartRange,
    ProcessSpec,
    check_ranges,
    fleet_specs,
    split_parts,
)
from dbladder.load.merge import merge_levels, merge_snapshots
from dbladder.plans import Ladder, PlannedLevel, due_times
from dbladder.workloads.base import Mix

PROBE = """
import json
import os
from pathlib import Path

from dbladder.load.targets.direct import DirectTarget
from dbladder.workloads.shop import Shop

_LOG = Path(__file__).with_name(f"sent-{os.getpid()}.jsonl")
_send = DirectTarget.send


def _probed(self, payload, callback, token=None, keep_body=False):
    # The open generator's token is (level record, due time, send time, operation). Each answer
    # is logged with the request and its due time, and with the latency it added to its level's
    # histogram (its total before and after: exactly the value recorded), or None if it added none.
    record, due = token[0], token[1]

    def answered(token, result, body):
        histogram = record.from_due
        count, total = histogram.count, histogram.total
        callback(token, result, body)
        value = histogram.total - total if histogram.count > count else None
        with _LOG.open("a") as log:
            log.write(json.dumps([due, payload[0], list(payload[1]), value]) + "\\n")

    return _send(self, payload, answered, token, keep_body)


DirectTarget.send = _probed
workload = Shop()
"""

READS = Mix({"product": 0.5, "page": 0.3, "order": 0.2})
"""Reads only: three fleets on one SQLite file at once, and every request answered 2xx."""

LADDER = Ladder(start=18, step=12, steps=2, hold=1.0, warmup=0.25)


def probed_spec(sqlite_url: str, folder: Path) -> ProcessSpec:
    """The seeded shop read in direct mode, each process logging what it sends into `folder`."""
    folder.mkdir()
    path = folder / "probe.py"
    path.write_text(PROBE)
    return ProcessSpec(
        LADDER, workload=str(path), mix=READS, sizes=dict(SMALL.sizes), target="direct",
        db_url=sqlite_url, connections=3, timeout=2.0,
    )  # fmt: skip


def sent(folder: Path) -> list[tuple[float, int, tuple[Any, ...], int | None]]:
    """Every (due time, operation, args, latency recorded) the fleet's processes logged, by due time."""
    rows = [json.loads(line) for log in folder.glob("sent-*.jsonl") for line in log.read_text().splitlines()]
    return sorted((due, operation, tuple(args), value) for due, operation, args, value in rows)


def measured_values(
    rows: list[tuple[float, int, tuple[Any, ...], int | None]], level: PlannedLevel
) -> list[int]:
    """The latencies recorded for the requests due in the level's measured window."""
    return [
        value for due, _, _, value in rows if level.measured_from <= due < level.end and value is not None
    ]


@pytest.mark.slow
def test_two_fleets_with_disjoint_ranges_send_one_fleets_schedule_and_merge_into_one_histogram(
    sqlite_url, tmp_path
):
    async def seeded() -> None:
        async with opened(sqlite_url, EngineOptions(pool_size=1)) as engine:
            await seed(engine, SHOP, SMALL)

    asyncio.run(seeded())
    whole = probed_spec(sqlite_url, tmp_path / "whole")
    first, second = fleet_specs(probed_spec(sqlite_url, tmp_path / "split"), split_parts([1, 2]))
    assert (first.part_range, second.part_range) == (PartRange(0, 1, 3), PartRange(1, 2, 3))
    # The two fleets and the one of every part run at once, as fleets on two machines would.
    with contextlib.ExitStack() as stack:
        fleets = [
            stack.enter_context(Fleet(spec, processes))
            for spec, processes in ((first, 1), (second, 2), (whole, 3))
        ]
        levels = [[e.level for e in fleet.events() if isinstance(e, LevelDone)] for fleet in fleets]
        snapshots = [fleet.finish() for fleet in fleets]
    for snapshot in snapshots:
        assert (snapshot["missing_parts"], snapshot["errors"], snapshot["interrupted"]) == (0, [], False)
        assert snapshot["parts"] == 3  # every process counted its part out of the run's three
    schedule = LADDER.levels()
    for fleet_levels in levels:
        assert [level["index"] for level in fleet_levels] == [0, 1]
        for level in fleet_levels:
            assert set(level["outcomes"]) >= {"2xx"}
            assert sum(level["outcomes"].values()) == level["outcomes"]["2xx"], level["outcomes"]

    # (a) The same due times, each with the same operation and arguments, every one exactly once.
    split_rows, whole_rows = sent(tmp_path / "split"), sent(tmp_path / "whole")
    every_due = sorted(due for level in schedule for due in due_times(level))
    assert [row[0] for row in whole_rows] == every_due
    assert [row[:3] for row in split_rows] == [row[:3] for row in whole_rows]
    assert sum(level.requests for level in schedule) == len(split_rows) == 18 + 30
    # The first fleet (part 1 of 3) sent every third request from the first, the second fleet the rest.
    alone = sorted(due for level in schedule for due in due_times(level, 0, 3))
    assert len(alone) == 16 and set(alone) < {row[0] for row in split_rows}

    # (b) The two fleets' level snapshots, merged as one fleet merges its processes', are one
    # histogram that recorded every value of both, bucket for bucket.
    for index, level in enumerate(schedule):
        merged = merge_levels([levels[0][index], levels[1][index]])
        one = Histogram()
        one.record_many(measured_values(split_rows, level))
        assert one.count == merged["outcomes"]["2xx"] > 0
        assert Histogram.from_dict(merged["latency_from_due"]) == one
        assert merged["latency_from_due"] == one.to_dict()
    run = merge_snapshots(snapshots[:2])
    assert (run["parts"], run["processes"]) == (3, 3)
    for index, level in enumerate(schedule):
        one = Histogram()
        one.record_many(measured_values(split_rows, level))
        assert Histogram.from_dict(run["levels"][index]["latency_from_due"]) == one


def test_one_machine_owns_every_part_as_before() -> None:
    spec = ProcessSpec(LADDER)
    assert spec.part_range is None and spec.parts_of(4) == PartRange(0, 4, 4) == PartRange.whole(4)
    assert list(PartRange(2, 3, 6).parts) == [2, 3, 4] and not PartRange(2, 3, 6).is_whole
    assert split_parts([3]) == [PartRange.whole(3)]
    assert split_parts([2, 1, 3]) == [PartRange(0, 2, 6), PartRange(2, 1, 6), PartRange(3, 3, 6)]


@pytest.mark.parametrize(
    ("first", "count", "total", "words"),
    [
        (0, 0, 3, "a fleet must own 1 part or more, not 0"),
        (2, 2, 3, "parts 3-4 fall outside the 3 parts of the run"),
        (-1, 1, 3, "parts 0 fall outside the 3 parts of the run"),
        (0, 1, 0, "the total of parts must be 1 or more, not 0"),
        (0, True, 3, "count must be a whole number, not True"),
    ],
)
def test_an_empty_range_or_one_outside_the_total_is_refused_when_made(first, count, total, words) -> None:
    with pytest.raises(BadPartRange, match=f"^bad range of parts: {words}$"):
        PartRange(first, count, total)


def test_ranges_that_overlap_leave_a_part_out_or_count_differently_are_refused() -> None:
    spec = ProcessSpec(LADDER)
    with pytest.raises(BadPartRange, match=r"^parts 1-2 and parts 2-3 of 3 overlap: their requests"):
        fleet_specs(spec, [PartRange(0, 2, 3), PartRange(1, 2, 3)])
    with pytest.raises(
        BadPartRange, match=r"^the fleets own parts 1, 3 of 3: 1 part\(s\) from part 2 would never be sent$"
    ):
        fleet_specs(spec, [PartRange(2, 1, 3), PartRange(0, 1, 3)])
    with pytest.raises(BadPartRange, match=r"different totals: \[3, 4\]"):
        check_ranges([PartRange(0, 1, 3), PartRange(1, 3, 4)])
    with pytest.raises(BadPartRange, match="no fleet owns a part"):
        check_ranges([])
    with pytest.raises(BadPartRange, match="a fleet must own 1 part or more, not 0"):
        split_parts([2, 0])


def test_a_range_of_another_size_than_the_fleet_is_refused_before_a_process_starts() -> None:
    spec = ProcessSpec(LADDER, part_range=PartRange(1, 2, 5))
    with pytest.raises(
        BadPartRange, match=r"^parts 2-3 of 5 need 2 generator process\(es\), one each, not 3$"
    ):
        Fleet(spec, 3)
    with pytest.raises(BadPartRange, match="must be a PartRange"):
        ProcessSpec(LADDER, part_range=(0, 1, 1))  # type: ignore[arg-type]
