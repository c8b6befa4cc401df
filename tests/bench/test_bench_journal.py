"""The journal test: readers and a writer; SQLite's busy counting against known answers."""

from __future__ import annotations

import asyncio
import threading
import time

import apsw
import pytest

from dbladder.bench import JournalConfig, render_journal, run_journal_test
from dbladder.bench.journal import WorkerSpec, _work, phases, summarise
from dbladder.bench.measure import Measurement
from dbladder.data.seeding import row_counts, seed
from dbladder.engines import opened
from dbladder.urls import parse_url
from dbladder.workloads.base import DataSpec
from dbladder.workloads.registry import load_workload

CHIRP = load_workload("chirp")
TINY = DataSpec(1, {"users": 100, "posts": 2_000})
PLANNED = CHIRP.planned_rows(TINY.sizes)
HOLD_S = 0.3


def seed_tiny(url: str) -> None:
    async def main() -> None:
        async with opened(url) as engine:
            await seed(engine, CHIRP, TINY)

    asyncio.run(main())


def counts(url: str) -> dict[str, int]:
    async def main() -> dict[str, int]:
        async with opened(url) as engine:
            return await row_counts(engine, CHIRP.schema)

    return asyncio.run(main())


def hold_write_lock(path: str, seconds: float, taken: threading.Event) -> None:
    """Take SQLite's exclusive lock on a DELETE-mode file and keep it for `seconds`."""
    db = apsw.Connection(path)
    db.execute("BEGIN EXCLUSIVE")
    taken.set()
    time.sleep(seconds)
    db.execute("COMMIT")
    db.close()


def read_while_locked(url: str, seconds: float) -> dict:
    """One reader worker, started just as another connection takes the write lock for HOLD_S."""
    path = parse_url(url).path
    taken = threading.Event()
    holder = threading.Thread(target=hold_write_lock, args=(path, HOLD_S, taken))

    def arrive() -> None:  # after the reader's warm-up: the lock is taken before its first timed read
        holder.start()
        taken.wait(5)

    spec = WorkerSpec("reader", url, seconds, stream=0, seed=1, sizes=dict(TINY.sizes))
    try:
        return asyncio.run(_work(spec, arrive))
    finally:
        holder.join()


@pytest.mark.serial
def test_a_reader_blocked_by_the_write_lock_counts_its_retries(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/c.db?journal_mode=DELETE"
    seed_tiny(url)
    result = read_while_locked(url, 0.1)
    measured = Measurement.from_wire(result["measurement"])
    # SQLite's backoff sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms: 228 ms after 11 sleeps,
    # 328 ms after 12. A lock held 300 ms from just before the first read costs 11 or 12 of them.
    assert 10 <= result["busy_retries"] <= 13
    assert measured.errors == {}
    assert measured.latency.max >= (HOLD_S - 0.02) * 1e6
    assert measured.operations >= 1


@pytest.mark.serial
def test_a_reader_past_busy_timeout_counts_a_busy_error(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/c.db?journal_mode=DELETE&busy_timeout=50"
    seed_tiny(url)
    result = read_while_locked(url, 0.2)
    measured = Measurement.from_wire(result["measurement"])
    # Each try gives up after 50 ms of sleeps (1 + 2 + 5 + 10 + 15 + 17); the lock outlasts the 0.2 s.
    assert 2 <= measured.errors.get("BusyError", 0) <= 5
    assert measured.operations == 0
    assert result["busy_retries"] >= 6 * measured.errors["BusyError"]


@pytest.mark.serial
def test_wal_readers_never_wait_for_the_write_lock(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/c.db?journal_mode=WAL"
    seed_tiny(url)
    result = read_while_locked(url, 0.2)
    measured = Measurement.from_wire(result["measurement"])
    assert result["busy_retries"] == 0 and measured.errors == {}
    assert measured.latency.max < HOLD_S * 1e6 and measured.operations > 1


def test_summarise_adds_readers_and_keeps_the_writer_apart() -> None:
    def wire(operations: int, latencies: list[int], errors: dict[str, int] | None = None) -> dict:
        measured = Measurement(operations, operations, 2.0, errors=errors or {})
        measured.latency.record_many(latencies)
        return measured.to_wire()

    results = [
        {"role": "reader", "measurement": wire(100, [1000] * 99 + [50_000]), "busy_retries": 3},
        {"role": "reader", "measurement": wire(300, [2000] * 300, {"BusyError": 2}), "busy_retries": 4},
        {"role": "writer", "measurement": wire(50, [500] * 50, {"DatabaseTimeout": 1}), "busy_retries": 1},
    ]
    row = summarise("sqlite", "DELETE", "writer at 1,000/s", results)
    assert (row["readers"], row["reads"], row["reads_per_s"], row["writes_per_s"]) == (2, 400, 200.0, 25.0)
    assert row["read_max_ms"] == 50.0 and row["read_p50_ms"] == pytest.approx(2.0, rel=0.01)
    assert row["busy_errors"] == 3 and row["busy_retries"] == {"readers": 7, "writer": 1}
    assert row["post"] == {"reads_per_s": 497, "read_p99_ms": 133.85, "read_max_ms": 794}
    assert summarise("mariadb", "read-committed", "writer at 1,000/s", results)["post"] == {}


def test_phases_follow_the_post() -> None:
    names = [p.name for p in phases(JournalConfig())]
    assert names == ["readers only", "writer at 1,000/s", "writer flat out"]
    assert [p.name for p in phases(JournalConfig(read_only_phase=False, write_rate=50))] == [
        "writer at 50/s",
        "writer flat out",
    ]


@pytest.mark.slow
def test_sqlite_journal_test_runs_both_modes_from_fresh_copies(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/c.db"
    seed_tiny(url)
    result = run_journal_test(JournalConfig(db_url=url, seconds=0.3, readers=2, workers="threads"))
    rows = result["rows"]
    assert [(r["mode"], r["phase"]) for r in rows] == [
        (mode, phase)
        for mode in ("WAL", "DELETE")
        for phase in ("readers only", "writer at 1,000/s", "writer flat out")
    ]
    for row in rows:
        assert row["readers"] == 2 and row["reads"] > 0
        assert row["read_p50_ms"] <= row["read_p99_ms"] <= row["read_max_ms"]
        assert (row["writes"] > 0) == (row["phase"] != "readers only")
    assert all(
        r["busy_errors"] == 0 and r["busy_retries"]["readers"] == 0 for r in rows if r["mode"] == "WAL"
    )
    assert {p.name for p in tmp_path.iterdir()} <= {"c.db", "c.db-shm", "c.db-wal"}  # the copies are gone
    assert "17,581" in render_journal(result)
    assert counts(url) == PLANNED  # the writes went to the copies


@pytest.mark.slow
@pytest.mark.parametrize("server", ["postgres_url", "mariadb_url"])
def test_servers_run_the_same_shape(server: str, request) -> None:
    url = request.getfixturevalue(server)
    seed_tiny(url)
    result = run_journal_test(JournalConfig(db_url=url, seconds=0.3, readers=2, workers="threads"))
    rows = result["rows"]
    assert [r["phase"] for r in rows] == ["readers only", "writer at 1,000/s", "writer flat out"]
    assert all(r["reads"] > 0 and r["errors"] == {} for r in rows)
    assert rows[2]["writes"] > 0 and rows[2]["post"] == {}
    assert counts(url) == PLANNED


@pytest.mark.slow
def test_processes_run_side_by_side(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/c.db"
    seed_tiny(url)
    config = JournalConfig(db_url=url, seconds=0.5, readers=2, journal_modes=("WAL",), read_only_phase=False)
    rows = run_journal_test(config)["rows"]
    assert len(rows) == 2 and all(r["reads"] > 0 and r["writes"] > 0 for r in rows)


def test_a_journal_mode_sqlite_does_not_have_is_refused_before_any_copy_is_made():
    problems = JournalConfig(journal_modes=("WAL", "wal2")).validate()
    assert problems == ["journal_modes must be among WAL, DELETE, TRUNCATE, PERSIST, MEMORY, OFF, not 'wal2'"]
