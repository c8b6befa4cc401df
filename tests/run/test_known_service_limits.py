"""The service's limits of issue 32 made on purpose: a service that cannot use the cores it is given
(one of its two processes busy, the other idle), a machine whose CPUs are used up by other work,
and a service whose event loops are held by SQLite's write lock.

For the first two the service is a known server whose one thread spends `service_ms` of its own
CPU on every request (tests/known_servers.py, "cpu"), offered more than what it answers, so that
its backlog grows and it wants a whole core all level; dbladder's generator sends the level, the
run's sampler watches it (the server's processes labelled as the service's workers), and the
level is judged as the run judges it (`level_row`, `level_resources`, `level_diagnosis`). The
third is a whole run of dbladder's own service on SQLite.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from known_servers import known_server

from dbladder.load import mix
from dbladder.load.clock import MonotonicClock
from dbladder.load.executors.open import Generator
from dbladder.load.merge import merge_snapshots
from dbladder.load.targets.http import HttpTarget
from dbladder.observe import Sampler, fixed, summarise
from dbladder.observe.loops import LoopSampler
from dbladder.plans import Ladder
from dbladder.result.level_rows import level_row
from dbladder.result.passmark import PassMark
from dbladder.run.config import RunConfig
from dbladder.run.diagnose import level_diagnosis, level_resources
from dbladder.run.progress import QuietProgress
from dbladder.run.round import run_round
from dbladder.workloads import shop

# A backlog that grows a second a second fails every second by a 1 s mark, while a busy machine's
# schedule lag (151 ms p99 at a load of 8.7 on 2 cores) is far from the half of it that would
# name the generator (tests/run/test_known_causes.py, SLOW_MARK).
MARK = PassMark(p95_ms=1000.0, max_fail_pct=1.0)
SERVICE_MS = 4.0  # a request's CPU: 250 a second on a whole core
BURNER = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"


def sampled_level(port: int, rate: float, service: list[int], mark: PassMark = MARK) -> dict[str, Any]:
    """One level of `rate` a second, 3 s measured after 0.5 s, its row with the machine's figures
    over the window: this process as the generator, `service` as the service's workers (their
    event loops' states sampled as a run samples them). Its clock busy-waits the last 2 ms before
    each due time, so this process reads about a core at these rates whatever it sends: the
    levels are judged without the generator's CPU (`generator_cpu=False`), as a run with a
    busy-waiting clock judges them; its schedule lag still speaks for it."""
    roles = dict.fromkeys(service, "worker")
    sampler = Sampler(
        {"generator": lambda: [os.getpid()], "service": fixed(service)},
        interval=0.5,
        labelers={"service": roles.get},
    )
    loops = LoopSampler(fixed(service), lambda pid: roles.get(pid, "?"))
    loops.start()
    sampler.start()
    try:
        clock = MonotonicClock()
        requests = mix.requests(shop.workload, shop.workload.mix(write_share=0.2), shop.workload.sizes)
        generator = Generator(
            Ladder(rate, 0, 1, 3.5, warmup=0.5), clock, requests,
            HttpTarget("127.0.0.1", port, 2000, 10.0, shop.workload),
            operation_names=tuple(op.name for op in shop.workload.operations),
        )  # fmt: skip
        asyncio.run(generator.run())
    finally:
        samples = sampler.stop()
        loops.stop()
    level = merge_snapshots([generator.recorder.snapshot()])["levels"][0]
    row = level_row(level, mark)
    start = clock.origin + row["start_s"] + row["warmup_s"]
    end = clock.origin + row["start_s"] + row["hold_s"]
    row["machine"] = summarise(samples, start, end, row["served"]) | {
        "service_loops": loops.shares(start, end)
    }
    return row


@contextlib.contextmanager
def burners(count: int, seconds: float) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` processes each spinning a core for at most `seconds`, killed by PID after the block."""
    started = [subprocess.Popen([sys.executable, "-c", BURNER.format(seconds=seconds)]) for _ in range(count)]
    try:
        yield started
    finally:
        for process in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
@pytest.mark.serial
def test_one_busy_process_beside_an_idle_one_is_a_service_that_cannot_use_its_cores():
    # Two processes, as two workers: the load reaches one (the other listens on a port of its own
    # and is sent nothing). The busy one holds its loop 4 ms a request in a blocking sleep, offered
    # twice what that answers: its loop is busy all level, whatever else this shared machine runs
    # (a loop kept busy by CPU instead lost its core to other work here: 0.32 of one used, and the
    # machine's CPUs were rightly named); the other's loop is idle all level.
    with (
        known_server("block", service_ms=SERVICE_MS) as busy,
        known_server("block", service_ms=SERVICE_MS) as idle,
    ):
        row = sampled_level(busy.port, 2 * 1000 / SERVICE_MS, [busy.process.pid, idle.process.pid])
    resources = level_resources(row, generator_cpu=False, cores={"service": 2.0, "generator": 1.0})
    found = level_diagnosis(row, MARK, resources)
    assert (found.kind, found.resource) == ("saturation", "service worker"), found.line
    assert found.line.startswith("one service worker at its limit: the service at "), found.line
    assert " of its 2 workers: worker 1 " in found.line, found.line
    # Sampled about 100 times a second over 3 s: the busy loop was never caught idle waiting for
    # work (a backlog waited all level), the other never caught out of its wait.
    loops = {entry["pid"]: entry for entry in row["machine"]["service_loops"]}
    assert loops[busy.process.pid]["idle"] <= 0.05, loops
    assert loops[idle.process.pid]["idle"] >= 0.95, loops
    assert found.evidence["cpu_used"] < 1.0, found.line  # one core at most, of the two it may use


@pytest.mark.slow
@pytest.mark.serial
def test_a_machine_whose_cpus_other_work_used_up_is_named_with_each_share():
    # Twice as many burners as CPUs: the service's one thread, which wants a core for its backlog,
    # gets about cores / (2 * cores + 1) of a core and waits for the rest (offered what a whole core
    # answers, its backlog grows more than a second a second). It reached its limit only
    # by waiting: the machine's CPUs are what ran out, and "other" (the burners) used most of them.
    cores = os.cpu_count() or 1
    with known_server("cpu", service_ms=SERVICE_MS) as server:
        time.sleep(0.2)
        with burners(2 * cores, seconds=10.0):
            row = sampled_level(server.port, 1000 / SERVICE_MS, [server.process.pid])
    resources = level_resources(row, generator_cpu=False, cores={"service": 1.0, "generator": 1.0})
    found = level_diagnosis(row, MARK, resources)
    assert (found.kind, found.resource) == ("saturation", "host CPU"), found.line
    assert found.line.startswith("the machine's CPUs at their limit: "), found.line
    assert found.evidence["cpu_used.host"] >= 0.9 * cores, found.line
    other = found.evidence["cpu_used.host"] - sum(
        value
        for key, value in found.evidence.items()
        if key.startswith("cpu_used.") and key != "cpu_used.host"
    )
    assert other >= cores / 2, found.line  # the burners' share
    assert " + other " in found.line and "threads waiting for a CPU besides: service" in found.line


HOLD_WRITE_LOCK = """
import sys, time, apsw
connection = apsw.Connection(sys.argv[1])
connection.set_busy_timeout(5000)
connection.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
"""


class WriteLockHolder(QuietProgress):
    """Another program that takes the SQLite database's write lock (BEGIN IMMEDIATE) once the
    run's database and service are ready (the run says what load it sends just before it starts)
    and holds it for `seconds`, as a long write would (the PostgreSQL row lock's analog). A
    process of its own: SQLite's locks are the file's POSIX locks, which a process loses on every
    one of that file's descriptors when it closes any, and this test's process runs the run,
    whose SQLite activity probe opens and closes the -shm file to read it."""

    def __init__(self, path: str, seconds: float):
        self.path, self.seconds = path, seconds
        self.process: subprocess.Popen[str] | None = None

    def message(self, text: str) -> None:
        if "writes, target" in text and self.process is None:
            command = [sys.executable, "-c", HOLD_WRITE_LOCK, self.path, str(self.seconds)]
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            assert self.process.stdout is not None and self.process.stdout.readline() == "held\n"

    def end(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
            if self.process.stdout is not None:
                self.process.stdout.close()


@pytest.mark.slow
@pytest.mark.serial
def test_a_service_whose_loops_sleep_on_sqlite_s_write_lock_is_named_held_by_it(tmp_path):
    # Every request a write, on SQLite in the service's two workers (no single writer process),
    # while another connection holds the write lock for the whole level: a write sleeps in the
    # busy handler until its 5 s run out (then a 503), and its worker's loop, which runs SQLite
    # inline, sleeps with it. The loops use next to no CPU and sleep all level.
    path = str(tmp_path / "locked.sqlite")
    holder = WriteLockHolder(path, seconds=8.0)
    config = RunConfig(
        db_url=f"sqlite:///{path}",
        plan=Ladder(40, 40, 1, 4.0, warmup=1.0),
        pass_mark=MARK,
        sizes={"products": 200, "orders": 500},
        write_share=1.0,
        workers=2,
        engine_settings={"sqlite_writers": 0},
        out_dir=tmp_path / "out",
        integrity=False,
    )
    try:
        level = run_round(config, holder).to_json()["levels"][0]
    finally:
        holder.end()
    found = level["diagnosis"]
    assert (found["kind"], found["resource"]) == ("saturation", "write lock"), found["line"]
    assert found["line"].startswith(
        "the database's write lock: the service's loops asleep waiting for it (SQLite's busy handler) "
    ), found["line"]
    loops = level["machine"]["service_loops"]
    assert [entry["role"] for entry in loops] == ["worker", "worker"]
    # Asleep all of the 3 s window, sampled about 100 times a second: each reading's chance of
    # catching a loop between two sleeps (a few microseconds of its 1-100 ms) is next to none.
    for entry in loops:
        assert entry["sleep"] >= 0.9 and entry["running"] <= 0.05, entry
    assert level["service_breakdown"]["busy_waits"] > 0
