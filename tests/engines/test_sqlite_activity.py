"""The SQLite activity probe on a real file: WAL growth during writes, a checkpoint copying it
back, the WAL restarting after it, and counts from outside the database."""

from __future__ import annotations

import time

import apsw
import pytest

from dbladder.engines.activity import ActivitySampler, create_probe
from dbladder.errors import MissingDatabase
from dbladder.service import stats

ROWS = 200
INTERVAL = 0.02


def settle(sampler: ActivitySampler) -> float:
    """Wait for two readings taken after now (however late a busy machine runs the sampler), so a
    window ending here has a reading after what it holds, and the next one a baseline."""
    now = time.perf_counter()
    deadline = now + 5
    while sum(r.t > now for r in sampler.readings()) < 2:
        assert time.perf_counter() < deadline, "the sampler took no readings"
        time.sleep(INTERVAL / 2)
    return time.perf_counter()


def test_wal_growth_its_checkpoint_and_the_restart_after_it(tmp_path):
    path = tmp_path / "wal.db"
    db = apsw.Connection(str(path))
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")  # the test decides when the checkpoint runs
    db.execute("CREATE TABLE t (x BLOB)")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    busy = {"busy_waits": 0}
    sampler = ActivitySampler(create_probe(f"sqlite:///{path}", counters=lambda: busy), interval=INTERVAL)
    sampler.start()
    try:
        t0 = settle(sampler)
        for _ in range(ROWS):  # one commit each: at least one frame each
            db.execute("INSERT INTO t VALUES (randomblob(3000))")
        busy["busy_waits"] = 7
        t1 = settle(sampler)
        ((_, in_wal, copied),) = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        t2 = settle(sampler)
        db.execute("INSERT INTO t VALUES (randomblob(3000))")  # the WAL starts over from its beginning
        t3 = settle(sampler)
    finally:
        sampler.stop()
    assert sampler.warnings == []
    assert in_wal == copied >= ROWS

    writes = sampler.window(t0, t1).figures
    assert writes["frames_appended"] >= ROWS
    assert writes["frames_checkpointed"] == 0
    assert writes["wal_frames_max"] == in_wal
    assert writes["wal_bytes_in_use_max"] == in_wal * 4096
    assert writes["wal_file_bytes_max"] >= in_wal * 4096  # each frame is a page and a 24-byte header
    assert writes["busy_waits"] == 7

    checkpoint = sampler.window(t1, t2).figures
    assert checkpoint["frames_checkpointed"] == in_wal
    assert checkpoint["frames_appended"] == 0 and checkpoint["wal_restarts"] == 0
    assert checkpoint["busy_waits"] == 0

    restart = sampler.window(t2, t3).figures
    assert restart["wal_restarts"] == 1
    assert restart["frames_appended"] >= 1
    assert restart["wal_file_bytes_end"] == writes["wal_file_bytes_max"]  # a restart reuses the file
    db.close()


def test_a_database_not_in_wal_mode_has_only_the_counters(tmp_path):
    path = tmp_path / "rollback.db"
    db = apsw.Connection(str(path))
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("CREATE TABLE t (x)")
    sampler = ActivitySampler(
        create_probe(f"sqlite:///{path}", counters=lambda: {"busy_waits": 0}), interval=INTERVAL
    )
    sampler.start()
    try:
        t0 = settle(sampler)
        db.execute("INSERT INTO t VALUES (1)")
        t1 = settle(sampler)
    finally:
        sampler.stop()
    assert sampler.window(t0, t1).figures == {"busy_waits": 0}
    db.close()


def test_a_file_that_does_not_exist_fails_the_start(tmp_path):
    with pytest.raises(MissingDatabase, match="no SQLite file"):
        ActivitySampler(create_probe(f"sqlite:///{tmp_path}/absent.db")).start()


def test_the_service_s_busy_waits_come_through_its_counters_file(tmp_path):
    """The service counts sleeps on SQLite's file lock in its shared counters file (/stats); read
    there at every reading, they are a window's differences like any other counter."""
    counters_file = tmp_path / "counters"
    stats.create(counters_file, slots=2)
    worker = stats.Slot(counters_file, "worker")
    path = tmp_path / "busy.db"
    db = apsw.Connection(str(path))
    db.execute("PRAGMA journal_mode=WAL")
    probe = create_probe(f"sqlite:///{path}", counters=lambda: stats.totals(stats.read(counters_file)))
    sampler = ActivitySampler(probe, interval=INTERVAL)
    sampler.start()
    try:
        t0 = settle(sampler)
        worker.add("busy_waits", 5)
        worker.add("writes", 2)
        worker.flush()
        t1 = settle(sampler)
    finally:
        sampler.stop()
        worker.close()
    figures = sampler.window(t0, t1).figures
    assert (figures["busy_waits"], figures["writes"], figures["requests"]) == (5, 2, 0)
    db.close()
