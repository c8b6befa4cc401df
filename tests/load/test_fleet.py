"""The fleet of generator processes (dbladder.load.fleet): real spawned processes, one schedule,
levels merged in the parent, the levels a plan chooses on the way, and a process that dies."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import time
from pathlib import Path

import pytest
import test_generator
from test_direct import SHOP, SMALL
from test_generator import outcomes
from test_http_client import HOST, ScriptedServer
from test_users import expected_requests

from dbladder.data.seeding import seed
from dbladder.engines import EngineOptions, opened
from dbladder.histogram import Histogram
from dbladder.load.fleet import Fleet, LevelDone, ProcessSpec, run_processes, spread
from dbladder.plans import Ladder, Phase, Search, UserPlan
from dbladder.servers.processes import alive

threaded_server = test_generator.threaded_server  # a ScriptedServer on its own thread, for processes


def test_connections_spread_over_the_processes_as_evenly_as_whole_numbers_allow() -> None:
    assert spread(10, 4) == [3, 3, 2, 2]
    assert spread(8, 2) == [4, 4]
    assert spread(1, 2) == [1, 1]  # never a process without a connection
    spec = ProcessSpec(Ladder(1, 0, 1, 1), connections=10)
    assert [spec.connections_of(part, 4) for part in range(4)] == [3, 3, 2, 2]


def test_a_spec_takes_one_plan() -> None:
    with pytest.raises(TypeError, match="plan"):
        ProcessSpec()  # type: ignore[call-arg]
    assert ProcessSpec(UserPlan((Phase(1, 2, 3),))).duration == 5


@pytest.mark.slow
def test_processes_share_one_schedule_and_their_snapshots_merge(threaded_server: ScriptedServer) -> None:
    spec = ProcessSpec(
        Ladder(40, 40, 2, 0.5), host=HOST, port=threaded_server.port, in_flight=20, timeout=2.0
    )
    merged = run_processes(spec, processes=2)
    assert (merged["processes"], merged["missing_parts"], merged["interrupted"]) == (2, 0, False)
    assert [level["outcomes"] for level in merged["levels"]] == [
        outcomes(**{"2xx": 20}),
        outcomes(**{"2xx": 40}),
    ]
    assert threaded_server.connections >= 2


@pytest.mark.slow
def test_two_processes_split_the_users_and_merge_phases_and_seconds(
    threaded_server: ScriptedServer,
) -> None:
    plan = UserPlan((Phase(10, 0.0, 1.0), Phase(20, 0.5, 1.0)), 0.02, 0.04)
    spec = ProcessSpec(plan, host=HOST, port=threaded_server.port, in_flight=50, timeout=2.0)
    with Fleet(spec, processes=2) as fleet:
        streamed = [event for event in fleet.events() if isinstance(event, LevelDone)]
        merged = fleet.finish()
    assert (merged["processes"], merged["missing_parts"], merged["interrupted"]) == (2, 0, False)
    assert [event.index for event in streamed] == [0, 1]
    assert [event.level["users"] for event in streamed] == [10, 20]
    assert [level["state"] for level in merged["levels"]] == ["finished", "finished"]
    for level in merged["levels"]:
        # Each user runs in one process only: the two together send what the plan's users send
        # (twice as much if both ran every user).
        assert level["outcomes"]["2xx"] == pytest.approx(expected_requests(level, plan, 1.0), rel=0.15)
    served = sum(level["outcomes"]["2xx"] + level["warmup_requests"] for level in merged["levels"])
    assert served == threaded_server.requests
    assert sum(Histogram.from_dict(s["latency_from_due"]).count for s in merged["per_second"]) == served
    assert merged["model"] == "closed"


SLOW_TO_OPEN = """
import asyncio
import dataclasses
import os
from pathlib import Path

from dbladder.workloads.shop import Shop


class SlowToOpen(Shop):
    async def open(self, engine):
        # The first process to get here claims the marker and opens at once; the other one opens
        # 2.5 s later.
        try:
            os.close(os.open(Path(__file__).with_suffix(".first"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            await asyncio.sleep(2.5)
        return await super().open(engine)


workload = SlowToOpen()
"""


def slow_to_open(sqlite_url: str, folder: Path, hold: float) -> ProcessSpec:
    """A one-level ladder at 100 req/s on the seeded shop, whose second process opens 2.5 s late."""

    async def seeded():
        async with opened(sqlite_url, EngineOptions(pool_size=1)) as engine:
            await seed(engine, SHOP, SMALL)

    asyncio.run(seeded())
    path = folder / "slow.py"
    path.write_text(SLOW_TO_OPEN)
    return ProcessSpec(
        Ladder(100, 0, 1, hold), workload=str(path), sizes=dict(SMALL.sizes), target="direct",
        db_url=sqlite_url, connections=1, timeout=2.0,
    )  # fmt: skip


@pytest.mark.slow
def test_the_schedule_waits_for_the_slowest_process_to_be_ready(sqlite_url, tmp_path):
    # Known answer: however long the processes take to get ready, each one's first request is due
    # at the run start, which the parent sets once both are ready. A process 2.5 s slower than the
    # other still starts on time (a fixed head start of 1.5 s would leave it 1 s late) and both
    # together send rate x hold requests.
    spec = slow_to_open(sqlite_url, tmp_path, hold=1.0)
    started = time.perf_counter()
    merged = run_processes(spec, processes=2)
    took = time.perf_counter() - started
    assert (merged["missing_parts"], merged["errors"]) == (0, [])
    assert merged["late_start"] < 0.3, merged["late_start"]
    (level,) = merged["levels"]
    assert level["state"] == "finished" and sum(level["outcomes"].values()) == 100, level["outcomes"]
    assert level["outcomes"].get("dropped", 0) == 0, level["outcomes"]
    assert took >= 2.5 + 1.0  # the slow open, then the whole level after it


@pytest.mark.slow
def test_ctrl_c_while_the_processes_get_ready_stops_them(sqlite_url, tmp_path):
    # `with` calls no __exit__ when __enter__ fails: the fleet itself must stop the processes it
    # started, or they would climb the ladder with nobody listening. The KeyboardInterrupt is
    # raised where SIGINT would raise it, once the first process is ready and the other still
    # opens (a real signal sent at a fixed moment raced the processes' start on a busy machine).
    fleet = Fleet(slow_to_open(sqlite_url, tmp_path, hold=30.0), 2)
    receive = fleet._receive

    def receive_then_ctrl_c():
        message = receive()
        if fleet._ready:
            raise KeyboardInterrupt
        return message

    fleet._receive = receive_then_ctrl_c  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt), fleet:
        pytest.fail("the fleet was entered although Ctrl-C came while it got ready")
    assert len(fleet._ready) == 1  # interrupted while the slow process still opened
    assert fleet.pids and not any(alive(pid) for pid in fleet.pids)


@pytest.mark.slow
def test_levels_a_plan_chooses_on_the_way_are_sent_as_levels_and_timed_from_now(
    threaded_server: ScriptedServer,
) -> None:
    search = Search(start=40, hold=0.6, warmup=0.1, settle=0.0, budget=10, min_answers=0)
    spec = ProcessSpec(search, host=HOST, port=threaded_server.port, in_flight=20, timeout=2.0)
    with Fleet(spec, processes=2) as fleet:
        first = search.next_level([], 0)
        assert first is not None
        probe = fleet.start_level(first)
        assert (probe.index, probe.rate, probe.hold) == (0, 40, 0.6)
        assert probe.start >= time.perf_counter() - fleet.origin  # timed from now, not from 0
        (done,) = [event for event in fleet.level_events(0) if isinstance(event, LevelDone)]
        second = fleet.start_level(dataclasses.replace(first, index=1, rate=80))
        assert second.start >= probe.end
        (again,) = [event for event in fleet.level_events(1) if isinstance(event, LevelDone)]
        merged = fleet.finish()
    assert done.level["state"] == again.level["state"] == "finished"
    assert (merged["processes"], merged["missing_parts"], merged["interrupted"]) == (2, 0, False)
    assert [level["rate"] for level in merged["levels"]] == [40, 80]
    assert fleet.failure() is None


@pytest.mark.slow
def test_a_process_that_is_killed_is_named_and_the_levels_before_it_are_kept(
    threaded_server: ScriptedServer,
) -> None:
    spec = ProcessSpec(Ladder(40, 0, 3, 1.0), host=HOST, port=threaded_server.port, in_flight=20, timeout=2.0)
    with Fleet(spec, processes=2) as fleet:
        levels = [event for event in fleet.level_events(0) if isinstance(event, LevelDone)]
        victim = fleet.pids[1]
        os.kill(victim, signal.SIGKILL)
        later = [event for event in fleet.level_events(2) if isinstance(event, LevelDone)]
        failure = fleet.failure()
        fleet.stop()
        merged = fleet.finish()
    assert [event.index for event in levels] == [0] and later == []
    assert failure == f"generator process 2 of 2 (pid {victim}) failed: killed by SIGKILL"
    assert (merged["processes"], merged["missing_parts"], merged["interrupted"]) == (1, 1, True)
