"""A cluster on loopback for the tests: `dbladder scheduler` and agents as processes, each started
by the test and ended by its PID (tests/cluster)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

DBLADDER = [sys.executable, "-m", "dbladder"]
START_TIMEOUT = 60.0  # a busy 2-core machine takes 10-20 s to import Dask in three processes at once


def assert_reached_a_ceiling(result: dict) -> None:
    """The search held a rate below the lowest one that failed: found to its resolution, or
    bracketed when a busy machine spent the budget first."""
    levels = result["levels"]
    shown = [(level["offered_rps"], level["passed"], level["reasons"]) for level in levels]
    assert result["search"]["stopped_because"] in ("found", "budget"), shown
    failed = [level["offered_rps"] for level in levels if not level["passed"]]
    assert failed and 0 < result["ceiling_rps"] < min(failed), shown


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@dataclass
class LoopbackCluster:
    address: str
    folder: Path
    scheduler: Process | None = None
    agents: dict[str, Process] = field(default_factory=dict)
    tls: Path | None = None
    """The TLS files' folder every process is given (--tls), when the cluster is over TLS."""

    @property
    def tls_args(self) -> list[str]:
        return ["--tls", str(self.tls)] if self.tls is not None else []

    def start_agent(
        self, name: str, role: str = "load", env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> Process:
        log = self.folder / f"{name}.log"
        with log.open("w") as handle:  # the agent has its own copy of the descriptor
            popen = subprocess.Popen(
                [
                    *DBLADDER,
                    "agent",
                    "--scheduler",
                    self.address,
                    "--role",
                    role,
                    "--name",
                    name,
                    *self.tls_args,
                ],
                stdout=subprocess.DEVNULL,
                stderr=handle,
                env={**os.environ, **(env or {})},
                cwd=cwd,
            )
        process = self.agents[name] = Process(name, popen, log)
        return process

    def wait_joined(self, *names: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        for name in names:
            process = self.agents[name]
            while "joined" not in process.text():
                if process.popen.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"agent {name} did not join: {process.text()[-2000:]}")
                time.sleep(0.2)

    def end(self) -> None:
        """End every process this cluster started, by PID: agents first, then the scheduler."""
        for process in [*self.agents.values(), *([self.scheduler] if self.scheduler else [])]:
            if process.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGCONT)  # one a test stopped must be able to end
                process.popen.terminate()
                try:
                    process.popen.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.popen.kill()
                    process.popen.wait(timeout=5)


@contextlib.contextmanager
def loopback_cluster(
    folder: Path, agents: dict[str, dict[str, str]], tls: Path | None = None, plain_dask: bool = False
) -> Iterator[LoopbackCluster]:
    """A scheduler on a free loopback port and the load agents named in `agents` (each with its
    environment's additions), every one joined, over TLS with the files in `tls` if given; all
    ended after the block. The scheduler is `dbladder scheduler`, or with `plain_dask` Dask's own
    `dask scheduler` (no dbladder on it: it checks no agent's versions)."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    scheme = "tls" if tls is not None else "tcp"
    cluster = LoopbackCluster(f"{scheme}://127.0.0.1:{port}", folder, tls=tls)
    log = folder / "scheduler.log"
    if plain_dask:
        if tls is not None:
            raise ValueError("a plain Dask scheduler here is in clear")
        command = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
        command += ["--port", str(port), "--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
        started = "Scheduler at:"
    else:
        command = [*DBLADDER, "scheduler", "--port", str(port), *cluster.tls_args]
        started = "listening"
    with log.open("w") as handle:
        popen = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=handle)
    cluster.scheduler = Process("scheduler", popen, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while started not in cluster.scheduler.text():
            if popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the scheduler did not start: {cluster.scheduler.text()[-2000:]}")
            time.sleep(0.2)
        for name, spec in agents.items():
            spec = dict(spec)
            role = spec.pop("role", "load")
            cluster.start_agent(name, role, spec)
        cluster.wait_joined(*agents)
        yield cluster
    finally:
        cluster.end()
