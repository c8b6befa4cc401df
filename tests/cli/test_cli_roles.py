"""--cpus, --memory and --drop-caches on the command line: each bad input one line naming the
option, exit 2, nothing started; and the native client on the generator's CPUs against a managed
server on the database's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from cli_support import dbladder
from managed_support import require_programs

from dbladder.roles import memory_hierarchy, memory_problem

SHARED_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
CPUS = sorted(os.sched_getaffinity(0))


def refused(*args: str) -> str:
    done = dbladder(*args, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--cpus", "client=0"], "--cpus client=0: no role 'client'"),
        (["--cpus", "generator=4096"], "--cpus generator=4096: CPU 4096 does not exist"),
        (["--memory", "database=512"], "--memory database=512: '512' is not a size with a unit"),
        (["--memory", "database=64M"], "--memory database=64M: below 128M"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(args: list[str], names: str) -> None:
    assert names in refused("bench", "--native", "--db", "managed:postgresql", *args)


def test_the_machines_own_server_is_never_pinned() -> None:
    line = refused("bench", "--native", "--db", SHARED_PG, "--cpus", f"database={CPUS[-1]}")
    assert line == (
        f"Error: --cpus database: {SHARED_PG} is a server dbladder did not start, and dbladder never "
        "pins or caps a server it does not own; use --db managed:postgresql"
    )


def test_drop_caches_is_refused_to_others_than_root() -> None:
    if os.geteuid() == 0:
        pytest.skip("root may drop the page cache")
    assert "--drop-caches: only root" in refused("bench", "--native", "--drop-caches")


@pytest.mark.slow
def test_the_native_client_on_the_generators_cpus_against_a_placed_server(tmp_path) -> None:
    require_programs("postgresql")
    generator, database = CPUS[0], CPUS[-1]
    done = dbladder(
        "bench", "--native", "--db", "managed:postgresql", "--scale", "0.01", "--seconds", "1",
        "--warmup", "0", "--cpus", f"generator={generator}", "--cpus", f"database={database}", "--json",
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    block = json.loads(done.stdout)
    assert block["cpus"] == str(generator)
    assert block["client"] == "pgbench" and block["ops_per_s"] > 0


def test_serve_places_only_the_service() -> None:
    line = refused("serve", "--db", "sqlite:///nowhere.db", "--cpus", f"database={CPUS[0]}")
    assert "serve runs the service only" in line


@pytest.mark.slow
def test_serve_runs_on_the_services_cpus_in_its_cgroup(tmp_path) -> None:
    from cli_support import COMMAND
    from service_support import seed

    url = f"sqlite:///{tmp_path}/shop.db"
    seed(url)
    cap = ["--memory", "service=256M"] if memory_problem() is None else []
    process = subprocess.Popen(
        [
            *COMMAND,
            "serve",
            "--db",
            url,
            "--port",
            "0",
            "--workers",
            "2",
            "--cpus",
            f"service={CPUS[0]}",
            *cap,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert "http://" in process.stdout.readline()
        root = psutil.Process(process.pid)
        deadline = time.monotonic() + 20
        while len(family := [root, *root.children(recursive=True)]) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)  # the workers start after the service says where it listens
        assert len(family) >= 3
        time.sleep(1)
        for member in family:
            assert os.sched_getaffinity(member.pid) == {CPUS[0]}
        groups = [p for p in Path(f"/proc/{process.pid}/cgroup").read_text().splitlines() if ":memory:" in p]
        if cap:
            assert "/dbladder-" in groups[0]
            folder = memory_hierarchy().parent / groups[0].rsplit("/", 1)[1]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        for stream in (process.stdout, process.stderr):
            assert stream is not None
            stream.close()
    if cap:
        assert not folder.exists()
