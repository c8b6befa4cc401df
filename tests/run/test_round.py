"""`run_round` end to end: real SQLite, real service or a real slow HTTP server, real generator processes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from cli_support import dbladder

from dbladder.plans import Ladder
from dbladder.result.passmark import PassMark
from dbladder.result.run import RunResult
from dbladder.result.schema import RESULT_SCHEMA, problem
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round
from dbladder.servers.processes import alive

SMALL = {"products": 2000, "orders": 5000}
# These rounds test the run's mechanics, not a figure: a level of 50 or 100 req/s must pass on a
# machine busy with other work. Under the default mark (p95 50 ms) it did not always: in a whole
# suite beside a second one (load average 5-7) the 50 req/s level of the SQLite and the PostgreSQL
# ladder each failed once. A second's p95 on a quiet machine is 3-10 ms; 1 s is far above both.
MECHANICS = PassMark(p95_ms=1000, max_fail_pct=1)


def config(url: str, out: Path, **changes) -> RunConfig:
    base = RunConfig(
        db_url=url,
        plan=Ladder(50, 50, 2, 1.5, warmup=0.5),
        sizes=SMALL,
        workers=1,
        pool_size=8,
        out_dir=out,
    )
    return dataclasses.replace(base, **changes)


def check_result_file(out: Path, result: dict) -> None:
    on_disk = json.loads((out / "result.json").read_text())
    assert on_disk == json.loads(json.dumps(result))
    assert on_disk["schema"] == "dbladder.result/4"
    # The typed result reads it and gives it back unchanged, and the shipped schema accepts that.
    assert RunResult.from_json(on_disk).to_json() == on_disk
    assert problem(RunResult.from_json(on_disk).to_json(), RESULT_SCHEMA) is None
    for level in on_disk["levels"]:
        assert set(level) >= {
            "offered_rps",
            "achieved_rps",
            "p50_ms",
            "p95_ms",
            "p99_ms",
            "fail_pct",
            "dropped",
            "passed",
        }
        assert level["p50_ms"] <= level["p95_ms"] <= level["p99_ms"] <= level["max_ms"]


@pytest.mark.slow
def test_a_short_ladder_on_sqlite_climbs_and_reports_a_ceiling(sqlite_url, tmp_path):
    returned = run_round(config(sqlite_url, tmp_path, pass_mark=MECHANICS))
    assert isinstance(returned, RunResult)  # typed, as made: the file is its JSON
    assert [level.offered_rps for level in returned.levels] == [50, 100]
    result = returned.to_json()
    check_result_file(tmp_path, result)
    assert result["status"] == "complete"
    assert [level["offered_rps"] for level in result["levels"]] == [50, 100]
    assert all(level["passed"] for level in result["levels"]), result["levels"]
    assert result["ceiling_rps"] == 100
    # rate * (hold - warmup) requests per level, every one answered.
    assert [level["requests"] for level in result["levels"]] == [50, 100]
    assert [level["responses"] for level in result["levels"]] == [50, 100]
    assert result["engine"]["engine"] == "sqlite" and result["engine"]["durable"] is True
    assert result["service"]["stats"]["requests"] >= 150
    assert result["seeding"]["tables"]["orders"]["rows"] == SMALL["orders"]
    # What the machine did at each level (issue 6), joined to the level rows.
    for level in result["levels"]:
        machine = level["machine"]
        for key in ("host_usr", "host_sys", "host_iowait", "host_idle", "host_steal", "load1"):
            assert isinstance(machine[key], float), key
        assert machine["service_cpu_pct"] > 0 and machine["service_cpu_ms_per_1k"] > 0
        assert machine["generator_cpu_pct"] > 0
        breakdown = level["service_breakdown"]
        assert breakdown["timed_requests"] > 0
        assert (
            abs(breakdown["pool_wait_share"] + breakdown["database_share"] + breakdown["other_share"] - 1)
            < 0.01
        )
    assert {"cpu_model", "cpu_cores", "memory_total_bytes", "kernel", "python", "dependencies"} <= set(
        result["environment"]
    )
    timeseries = (tmp_path / "timeseries.csv").read_text().splitlines()
    assert timeseries[0].startswith("t,") and len(timeseries) > 3


@pytest.mark.slow
def test_direct_mode_measures_the_engine_without_http(sqlite_url, tmp_path):
    result = run_round(config(sqlite_url, tmp_path, target="direct", write_share=0.5)).to_json()
    assert result["service"] is None
    assert [level["responses"] for level in result["levels"]] == [50, 100]
    # Both levels pass, unless a commit's fsync on this shared disk held the loop: in direct mode
    # the engine runs in the generator's process, so it is then flagged as the generator falling
    # behind (a clean CI run: one sync held it 0.5 s, lag p99 497 ms, p95 476 ms at 100 req/s).
    second = result["levels"][1]
    if not second["passed"]:
        assert any("generator fell behind" in flag for flag in second["flags"]), second["flags"]
    assert result["ceiling_rps"] == (100 if second["passed"] else 50)


class SerialServer:
    """A real HTTP server on loopback that answers one request at a time, each after `delay` seconds:
    a service with a known capacity of 1/delay requests per second."""

    def __init__(self, delay: float):
        self.delay = delay
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        lock = asyncio.Lock()

        async def serve(reader, writer):
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    if length:
                        await reader.readexactly(length)
                    async with lock:
                        await asyncio.sleep(self.delay)
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
                writer.close()

        server = self._loop.run_until_complete(asyncio.start_server(serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        for task in asyncio.all_tasks(self._loop):
            task.cancel()
        self._loop.run_until_complete(asyncio.sleep(0.01))
        self._loop.close()

    def __enter__(self) -> SerialServer:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc_info) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@pytest.mark.slow
def test_the_first_failed_step_stops_the_run_and_the_ceiling_is_the_step_below(sqlite_url, tmp_path):
    # Capacity 200 req/s: 50 and 100 hold easily, 400 cannot.
    with SerialServer(delay=0.005) as server:
        result = run_round(
            config(
                sqlite_url,
                tmp_path,
                plan=Ladder(100, 300, 3, 2, warmup=0.5),
                service_url=f"http://127.0.0.1:{server.port}",
                timeout=3.0,
            )
        ).to_json()
    offered = [level["offered_rps"] for level in result["levels"]]
    assert offered == [100, 400], "the run stops after the first failed level"
    assert [level["passed"] for level in result["levels"]] == [True, False]
    assert result["ceiling_rps"] == 100
    failed = result["levels"][1]
    assert any("p95" in reason for reason in failed["reasons"]), failed["reasons"]
    assert result["stopped_because"].startswith("level 2 (400 req/s) failed: ")


@pytest.mark.slow
def test_a_tiny_in_flight_limit_drops_requests_and_fails_the_step(sqlite_url, tmp_path):
    with SerialServer(delay=0.02) as server:
        result = run_round(
            config(
                sqlite_url,
                tmp_path,
                plan=Ladder(100, 0, 1, 1.5, warmup=0.5),
                service_url=f"http://127.0.0.1:{server.port}",
                in_flight=1,
                pass_mark=PassMark(p95_ms=10_000, max_fail_pct=1),
            )
        ).to_json()
    level = result["levels"][0]
    assert level["dropped"] > 0 and level["failures"]["dropped"] == level["dropped"]
    assert level["fail_pct"] >= 1 and not level["passed"]
    assert level["reasons"] == [f"{level['fail_pct']:.2f} % failed is not under 1 %"]
    assert result["ceiling_rps"] is None


@pytest.fixture
def run_in_subprocess(tmp_path) -> Iterator[subprocess.Popen]:
    # --continue-after-fail: on a busy machine a level may fail early, and the run must still be
    # running when the test interrupts it.
    process = subprocess.Popen(
        [sys.executable, "-c", "from dbladder.cli import main; main()", "run",
         "--db", f"sqlite:///{tmp_path}/shop.db", "--size", "products=2000", "--size", "orders=5000",
         "--start", "50", "--step", "50", "--steps", "20", "--hold", "1.5", "--warmup", "0.5",
         "--workers", "1", "--continue-after-fail", "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_ctrl_c_keeps_the_finished_levels_and_leaves_no_process(run_in_subprocess, tmp_path):
    result_path = tmp_path / "out" / "result.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if result_path.exists() and len(json.loads(result_path.read_text())["levels"]) >= 2:
            break
        time.sleep(0.2)
    else:
        pytest.fail("the run did not finish two levels within 60 s")
    descendants = _children(run_in_subprocess.pid)
    assert descendants, "the service and the generator run as child processes"
    run_in_subprocess.send_signal(signal.SIGINT)
    stdout, stderr = run_in_subprocess.communicate(timeout=60)
    assert run_in_subprocess.returncode == 0, stderr
    result = json.loads(result_path.read_text())
    assert result["status"] == "interrupted"
    assert result["stopped_because"] == "interrupted by the user (Ctrl-C)"
    assert len(result["levels"]) >= 2 and all(level["state"] == "finished" for level in result["levels"])
    assert "stopped  interrupted by the user (Ctrl-C)" in stdout
    assert "Traceback" not in stderr
    # Helpers such as multiprocessing's resource tracker leave a moment after their parent.
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in descendants) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in descendants:
        assert not alive(pid), f"process {pid} ({_name(pid)}) outlived the run"


def _children(pid: int) -> list[int]:
    """Every descendant process of pid (the service, its workers, the generators)."""
    return [child.pid for child in psutil.Process(pid).children(recursive=True)]


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
    except OSError:
        return "gone"


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["postgresql", "mariadb"])
def test_a_short_ladder_on_each_server_reports_a_ceiling(engine, request, tmp_path):
    url = request.getfixturevalue({"postgresql": "postgres_url", "mariadb": "mariadb_url"}[engine])
    result = run_round(config(url, tmp_path, workers=2, pass_mark=MECHANICS)).to_json()
    check_result_file(tmp_path, result)
    assert result["engine"]["engine"] == engine
    assert [level["responses"] for level in result["levels"]] == [50, 100]
    assert result["ceiling_rps"] == 100


@pytest.mark.slow
def test_syscalls_are_counted_per_request_or_the_run_says_why_not(sqlite_url, tmp_path):
    result = run_round(
        config(sqlite_url, tmp_path, plan=Ladder(100, 0, 1, 4, warmup=0.5), syscalls=True)
    ).to_json()
    check_result_file(tmp_path, result)
    if shutil.which("strace") or shutil.which("bpftrace"):
        counted = result["levels"][0]["syscalls"]
        assert counted["seconds"] > 0
        # SQLite runs inside the service: its calls are the service's, and it makes some per request.
        assert counted["per_request"]["service"] > 0 and counted["per_request"]["database"] is None
        assert any("latency inflated" in flag for flag in result["levels"][0]["flags"])
    else:
        assert any("needs bpftrace or strace" in flag for flag in result["flags"])


DIES_MID_RUN = """
import asyncio
import os
import signal
from pathlib import Path

from dbladder.workloads.shop import Shop


class DiesMidRun(Shop):
    async def open(self, engine):
        # The second process to open is killed 4.5 s later: in the second of three 3 s levels,
        # after it has reported the first (both open within moments, then start together).
        try:
            os.close(os.open(Path(__file__).with_suffix(".first"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            asyncio.get_running_loop().call_later(4.5, os.kill, os.getpid(), signal.SIGKILL)
        return await super().open(engine)


workload = DiesMidRun()
"""


@pytest.mark.slow
def test_a_generator_process_that_dies_is_one_line_and_exit_1_with_the_finished_levels_kept(
    tmp_path: Path,
) -> None:
    workload = tmp_path / "dies.py"
    workload.write_text(DIES_MID_RUN)
    out = tmp_path / "out"
    done = dbladder(
        "run", "--db", f"sqlite:///{tmp_path}/shop.db", "--workload", str(workload),
        "--size", "products=2000", "--size", "orders=5000", "--target", "direct", "--generators", "2",
        "--preset", "quick", "--start", "50", "--step", "0", "--steps", "3", "--hold", "3",
        "--warmup", "0.5", "--no-integrity", "--out", str(out),
        "--p95", str(MECHANICS.p95_ms),  # the first level must pass (it read 327 ms beside 2 workers)
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    # The progress goes to stderr as well; the error is its one last line.
    lines = done.stderr.strip().splitlines()
    assert [line for line in lines if line.startswith("Error")] == lines[-1:], done.stderr
    assert "Traceback" not in done.stderr
    assert re.fullmatch(
        r"Error: generator process [12] of 2 \(pid \d+\) failed: killed by SIGKILL; "
        r"the levels finished before it are in .*result\.json",
        lines[-1],
    ), lines[-1]
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "generator failed"
    assert re.match(
        r"generator process [12] of 2 \(pid \d+\) failed: killed by SIGKILL$", result["stopped_because"]
    )
    assert [level["index"] for level in result["levels"]] == [0]
    assert result["levels"][0]["state"] == "finished"
