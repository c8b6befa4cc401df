"""Faults on purpose: refused when dbladder does not own what it would stop; otherwise the run goes on
through them, the level shows the outage, and no acknowledged write is lost with durable settings."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from managed_support import require_programs

from dbladder.errors import InvalidConfig
from dbladder.plans import Ladder
from dbladder.result.passmark import PassMark
from dbladder.run.config import RunConfig
from dbladder.run.faults import BadFault, Fault, FaultActions, FaultInjector, fault_problems, parse_fault
from dbladder.run.round import run_round

SMALL = {"products": 2000, "orders": 5000}
# Judged leniently: these tests are about what survives a fault, not about latency on a busy machine.
LENIENT = PassMark(p95_ms=10_000, max_fail_pct=100)


def config(url: str, out: Path, **changes) -> RunConfig:
    base = RunConfig(
        db_url=url,
        plan=Ladder(40, 0, 2, 3.0),
        sizes=SMALL,
        write_share=0.5,
        workers=1,
        pool_size=8,
        out_dir=out,
        pass_mark=LENIENT,
        continue_after_fail=True,
    )
    return dataclasses.replace(base, **changes)


def test_faults_are_read_as_kind_level_and_second():
    assert parse_fault("kill-db@3:10") == Fault("kill-db", 3, 10.0)
    assert parse_fault(" Kill-Service@2 ") == Fault("kill-service", 2, None)
    for text in ("kill-db", "kill-db@x", "explode@1", "kill-db@1:-2"):
        with pytest.raises(BadFault):
            parse_fault(text)


def test_a_fault_on_something_dbladder_did_not_start_is_refused_before_the_run(tmp_path):
    levels = Ladder(10, 10, 2, 5).levels()

    def problems(faults: list[str], **where) -> list[str]:
        given = {"db_url": "sqlite:///x.db", "target": "http", "service_url": None, "writer_processes": 0}
        return fault_problems([parse_fault(f) for f in faults], levels=levels, **(given | where))

    shared = "postgresql://postgres@127.0.0.1:5432/postgres"
    (refused,) = problems(["kill-db@1"], db_url=shared, engine="postgresql")
    assert refused.startswith(f"--fault kill-db@1: {shared} is not a server")
    assert "managed:postgresql" in refused
    assert problems(["kill-db@1"], db_url="managed:postgresql", engine="postgresql") == []
    assert problems(["kill-db@1"], engine="sqlite") == [
        "--fault kill-db@1: SQLite has no server; its data lives in the service's processes "
        "(kill-service, kill-writer)"
    ]
    assert problems(["kill-service@1"], service_url="http://127.0.0.1:9000", engine="sqlite") == [
        "--fault kill-service@1: the load goes to http://127.0.0.1:9000, a service this run did not "
        "start; dbladder only stops the service it starts"
    ]
    assert problems(["kill-writer@2"], engine="sqlite") == [
        "--fault kill-writer@2: there is no single writer process to kill (use --sqlite-writers 1)"
    ]
    assert problems(["kill-service@3", "kill-service@1:7"], engine="sqlite") == [
        "--fault kill-service@3: the run has levels 1 to 2, not 3",
        "--fault kill-service@1:7: the second must be from 0 to below the level's 5 s, not 7",
    ]
    # The same through RunConfig: one InvalidConfig before anything starts.
    with pytest.raises(InvalidConfig, match="is not a server dbladder started"):
        RunConfig(
            db_url=shared, plan=Ladder(40, 0, 2, 3.0), faults=("kill-db@1",), out_dir=tmp_path
        ).checked()
    # A search's probes are not known before the run: a fault needs a ladder or users plan.
    with pytest.raises(InvalidConfig, match="--fault needs a ladder or users plan"):
        RunConfig(db_url="sqlite:///x.db", faults=("kill-service@1",), out_dir=tmp_path).checked()


@pytest.mark.slow
def test_sqlite_through_a_killed_service_and_writer_keeps_every_acknowledged_order(sqlite_url, tmp_path):
    result = run_round(
        config(
            sqlite_url,
            tmp_path,
            engine_settings={"sqlite_writers": 1},
            faults=("kill-service@1:1", "kill-writer@2:1"),
        )
    ).to_json()
    assert result["status"] == "complete" and len(result["levels"]) == 2
    integrity = result["integrity"]
    assert integrity["checked"] and integrity["acknowledged"] > 20
    assert integrity["present"] == integrity["acknowledged"]
    assert (integrity["lost"], integrity["corrupted"], integrity["violations"]) == (0, 0, [])
    assert integrity["seconds"] < 5
    assert "synchronous=FULL" in integrity["durability"] and "kill-service" in integrity["durability"]
    kill, writer = result["faults"]
    assert kill["state"] == writer["state"] == "done"
    assert 0 < kill["back_after_s"] < 30 and 0 < writer["back_after_s"] < 30
    # The levels struck show the outage.
    first, second = result["levels"]
    assert first["faults"] == [kill] and second["faults"] == [writer]
    assert sum(first["failures"].values()) > 0
    print("failures:", first["failures"], second["failures"])
    # The service started again after the kill; its writer was replaced once since.
    assert result["service"]["stats"]["writer_restarts"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["postgresql", "mariadb"])
def test_a_killed_managed_server_keeps_every_acknowledged_order(engine, tmp_path):
    require_programs(engine)
    result = run_round(config(f"managed:{engine}", tmp_path, faults=("kill-db@1:1",))).to_json()
    assert result["status"] == "complete" and len(result["levels"]) == 2
    assert result["config"]["db_url"] == f"managed:{engine}"
    assert result["database_server"]["engine"] == engine and result["database_server"]["temporary"]
    integrity = result["integrity"]
    assert integrity["acknowledged"] > 20 and integrity["present"] == integrity["acknowledged"]
    assert (integrity["lost"], integrity["corrupted"], integrity["violations"]) == (0, 0, [])
    (fault,) = result["faults"]
    assert fault["state"] == "done" and "crash recovery" in fault["detail"]
    assert fault["back_after_s"] is not None and fault["back_after_s"] < 30
    struck, after = result["levels"]
    assert struck["faults"] == [fault] and sum(struck["failures"].values()) > 0
    assert "faults" not in after
    # The server the fault started again is the one measured after it (40 req/s, half of them
    # writes, cannot cost it nothing): the killed root's process tree would read 0.
    assert after["machine"]["database_cpu_pct"] > 0, after["machine"]
    print(engine, "failures:", struck["failures"], "back after", fault["back_after_s"], "s")


class Recorded(FaultActions):
    """Actions that only note when they ran (the real ones are tested end to end above)."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def run(self, kind: str) -> str:
        self.times.append(time.perf_counter())
        return f"{kind} noted"


@pytest.mark.slow
@pytest.mark.serial
def test_the_injector_strikes_on_the_run_clock_and_times_until_answers_come_back():
    levels = Ladder(10, 10, 3, 0.4).levels()
    actions = Recorded()
    origin = time.perf_counter() + 0.1
    answers_from = origin + 0.4 + 0.1 + 0.25  # level 2, second 0.1, then 0.25 s of outage
    faults = [parse_fault("kill-service@2:0.1"), parse_fault("restart-db@3")]
    with FaultInjector(
        faults, levels, origin, actions, lambda: time.perf_counter() >= answers_from
    ) as injector:
        time.sleep(1.4)
    first, second = injector.records
    # Level 2 starts at 0.4 s; level 3's middle is 0.8 + 0.2. A busy machine may wake the thread late.
    assert [t - origin for t in actions.times] == [pytest.approx(0.5, abs=0.1), pytest.approx(1.0, abs=0.1)]
    assert first["state"] == "done" and first["detail"] == "kill-service noted"
    assert first["at_s"] == pytest.approx(0.5, abs=0.1)
    # The outage ends 0.75 s after the origin whenever the strike came; probes go every 20 ms.
    assert first["at_s"] + first["back_after_s"] == pytest.approx(0.75, abs=0.06)
    assert second["back_after_s"] < 0.1  # answers never went away
    assert injector.records_for(1) == [first] and injector.records_for(0) == []


def test_a_fault_the_run_never_reaches_is_recorded_as_such():
    levels = Ladder(10, 10, 2, 5).levels()
    with FaultInjector(
        [parse_fault("kill-db@2:1")], levels, time.perf_counter(), Recorded(), lambda: True
    ) as injector:
        pass
    assert injector.records[0]["state"] == "not reached"
