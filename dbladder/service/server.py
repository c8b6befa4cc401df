"""Starting and stopping the service: `serve` runs it in this process, `running_service` in a child.

`serve(config)` checks the database, creates the files the processes share, starts the single
SQLite writer when asked (and keeps it running: `keeper.py`), and runs granian's multi-process
server until SIGINT or SIGTERM: then granian stops accepting, lets in-flight requests finish, and
each worker closes its pool in `__rsgi_del__`; the writer is stopped last, because draining
workers may still need it.

`running_service(config)` is the same from Python (the load ladder, tests, the instance check):
it starts `python -m dbladder.service` in its own session, waits until every worker answers,
yields a handle, and on exit stops it and ends anything of its session still alive, by PID.
The handle can also kill the service (SIGKILL to every process of its session, as a crash would)
and start it again on the same port: the faults of a run (`dbladder.run.faults`).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engines import opened
from ..engines.base import EngineInfo
from ..errors import NotSeeded, PortInUse, ServiceFailed
from ..workloads.registry import load_workload
from .config import CONFIG_ENV, RuntimePaths, ServiceConfig

if TYPE_CHECKING:
    from granian.server import MPServer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServiceStarted:
    """What a starting service tells its caller once it listens."""

    url: str
    config: ServiceConfig
    engine: EngineInfo
    warnings: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line: where it listens and how it runs."""
        writers = ", one writer process" if self.config.writer_processes == 1 else ""
        return (
            f"listening on {self.url} ({self.config.workers} worker(s), pool {self.config.pool_size} "
            f"in all, {self.config.pool_per_worker} per worker{writers})"
        )


async def check_database(config: ServiceConfig) -> EngineInfo:
    """The engine's settings, after checking that the database is reachable and holds the workload."""
    workload = load_workload(config.workload)
    async with opened(config.db_url, config.engine_options) as engine:
        for table in workload.schema.tables:
            if not await engine.table_exists(table.name):
                raise NotSeeded(
                    f"{engine.url.redacted} has no {table.name} table; create the {workload.name} workload's "
                    f"data with `dbladder seed --workload {config.workload} --db {engine.url.redacted}`"
                )
        await workload.check_sql(engine)
        return await engine.describe()


def connection_warnings(config: ServiceConfig, info: EngineInfo) -> tuple[str, ...]:
    """A warning when the pools together may open more connections than the server allows."""
    limit = info.settings.get("max_connections", "")
    wanted = config.workers * config.pool_per_worker
    if limit.isdigit() and wanted > int(limit):
        return (
            f"a pool of {wanted} connections, but the server allows max_connections={limit}: "
            "a request that cannot get a connection is answered 503",
        )
    return ()


def check_port_free(config: ServiceConfig) -> None:
    """PortInUse when something listens on the address already.

    granian binds with SO_REUSEPORT, so without this check a second service on the same port
    would start quietly and take half of the first one's connections.
    """
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # SO_REUSEADDR tolerates connections in TIME_WAIT, never another listener.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((config.host, config.port))
        except OSError as exc:
            raise PortInUse(
                f"cannot listen on {config.base_url}: {exc.strerror}; "
                "choose another --port (0 picks a free one)"
            ) from None


def with_free_port(config: ServiceConfig) -> ServiceConfig:
    """The configuration with port 0 replaced by a port that is free now."""
    if config.port != 0:
        return config
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((config.host, 0))
        port = probe.getsockname()[1]
    return config.replace(port=port)


def serve(config: ServiceConfig, on_started: Callable[[ServiceStarted], None] | None = None) -> None:
    """Run the service in this process until SIGINT or SIGTERM; `on_started` once it listens."""
    # The server's own parts (granian; numpy, which files the timings) are imported where the
    # service runs: what only starts, stops or finds a service (a run, the app, the observer)
    # imports this module too, and would pay ~0.3 s for them.
    from . import stats
    from .app import app_loader
    from .keeper import WriterKeeper

    config = with_free_port(config.checked())
    check_port_free(config)
    info = asyncio.run(check_database(config))
    with tempfile.TemporaryDirectory(prefix="dbladder-service-") as folder:
        paths = RuntimePaths(
            stats=Path(folder) / "stats",
            writer_socket=Path(folder) / "writer.sock" if config.writer_processes == 1 else None,
        )
        stats.create(paths.stats, slots=config.workers + 1)
        writer = WriterKeeper(config, paths) if paths.writer_socket is not None else None
        if writer is not None:
            writer.start()
        try:
            server = granian_server(config)
            if on_started is not None:
                started = ServiceStarted(config.base_url, config, info, connection_warnings(config, info))
                server.on_startup(lambda: on_started(started))
            try:
                # granian types the loaded app as a callable; an object with __rsgi__ is accepted too.
                server.serve(target_loader=app_loader(config, paths), wrap_loader=False)  # type: ignore[arg-type]
            except SystemExit as exc:
                if exc.code:
                    raise ServiceFailed(
                        "a worker process exited unexpectedly; its error is in the log above"
                    ) from None
        finally:
            if writer is not None:
                writer.stop(config.shutdown_timeout)


def granian_server(config: ServiceConfig) -> MPServer:
    """granian configured as the service runs it (benchmarks serve a bare app with the same settings)."""
    from granian.constants import Interfaces
    from granian.log import LOGGING_CONFIG, LogLevels
    from granian.server import MPServer

    logging_config: dict[str, Any] = json.loads(json.dumps(LOGGING_CONFIG))
    # The app's own errors (a 500 logs its traceback) go where granian's go.
    logging_config["loggers"]["dbladder"] = {"handlers": ["console"], "level": "WARNING", "propagate": False}
    # MPServer: worker processes (the default on a GIL build too), each with its own engine.
    return MPServer(
        "dbladder.service",
        address=config.host,
        port=config.port,
        interface=Interfaces.RSGI,
        workers=config.workers,
        backpressure=config.max_in_flight,
        websockets=False,
        log_level=LogLevels.warning,
        log_dictconfig=logging_config,
        workers_kill_timeout=math.ceil(config.shutdown_timeout),
    )


# ---------------------------------------------------------------------------------------------
# The service as a child process, for Python callers


@dataclass(frozen=True)
class DecodedAnswer:
    """An answer of the service to a Python caller: its status and its body, decoded."""

    status: int
    body: Any  # decoded JSON, or the text when the body is not JSON


@dataclass
class RunningService:
    """A service started by `running_service`: where it listens, how to reach it, how to stop it."""

    config: ServiceConfig
    process: subprocess.Popen[bytes]
    log_path: Path
    starts: int = 1
    """How many times the service was started (1 + restarts after a kill or a stop)."""
    stopping: bool = field(default=False, repr=False)
    """SIGTERM was sent (`begin_stop`): the service is finishing its in-flight requests."""
    place: Callable[[], None] | None = field(default=None, repr=False)
    """Run in the service's process before it execs (its role's CPUs and memory cgroup), at every
    start, so that its workers and the SQLite writer are born in its place."""

    @property
    def url(self) -> str:
        return self.config.base_url

    @property
    def pid(self) -> int:
        """The service's main process (granian's); workers and the writer are its children."""
        return self.process.pid

    def begin_stop(self) -> None:
        """SIGTERM, as a process manager would send: stop accepting, finish in-flight requests, exit."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.stopping = True

    def stop(self, timeout: float | None = None) -> int:
        """Stop the service and every process of it; its exit code (negative: killed by that signal).

        After `begin_stop` it only waits: a second SIGTERM while granian finishes its in-flight
        requests ends it at once, with -15, and the requests with it.
        """
        stop_process_tree(
            self.process,
            self.config.shutdown_timeout + 5.0 if timeout is None else timeout,
            signalled=self.stopping,
        )
        self.stopping = False
        return self.process.returncode

    def kill(self) -> int:
        """SIGKILL every process of the service (its session: granian, workers, the SQLite writer)
        at once, as a crash would: nothing finishes, nothing is cleaned up. How many were killed."""
        members = [pid for pid in session_members(self.process.pid)]
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()
        deadline = time.monotonic() + 5.0
        while session_members(self.process.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        return len(members)

    def start_again(self, startup_timeout: float = 60.0) -> float:
        """Start the service again with the same configuration and port, after `kill()` or `stop()`;
        the seconds until every worker answered. ServiceFailed if it does not come up."""
        if self.process.poll() is None:
            raise ServiceFailed(f"the service on {self.url} is still running; stop or kill it first")
        began = time.monotonic()
        self.process = _launch(self.config, self.log_path, self.place)
        self.stopping = False
        self.starts += 1
        _wait_until_ready(self, time.monotonic() + startup_timeout)
        return time.monotonic() - began

    def request(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> DecodedAnswer:
        """One HTTP request on a new connection; `body` is sent as JSON (bytes as they are)."""
        return http_request(self.config.host, self.config.port, method, path, body, timeout)

    def stats(self) -> dict[str, Any]:
        """`GET /stats`: the counters of every process of the service."""
        response = self.request("GET", "/stats")
        if response.status != 200:
            raise ServiceFailed(f"GET /stats answered {response.status}: {response.body}")
        result: dict[str, Any] = response.body
        return result

    def log(self) -> str:
        """Everything the service printed so far."""
        return self.log_path.read_text(errors="replace")


def http_request(
    host: str, port: int, method: str, path: str, body: Any = None, timeout: float = 10.0
) -> DecodedAnswer:
    """One JSON request with the standard library; the status and the decoded body."""
    payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=payload, headers={"content-type": "application/json"})
        answer = connection.getresponse()
        raw = answer.read()
    finally:
        connection.close()
    try:
        decoded = json.loads(raw) if raw else None
    except ValueError:
        decoded = raw.decode(errors="replace")
    return DecodedAnswer(answer.status, decoded)


@contextlib.contextmanager
def running_service(
    config: ServiceConfig, *, startup_timeout: float = 60.0, place: Callable[[], None] | None = None
) -> Iterator[RunningService]:
    """The service running in a child process for the block; port 0 picks a free port; `place`
    runs in that process before it execs (dbladder.roles: the service role's CPUs and cgroup).

    Returns once every worker answers `/stats`; raises ServiceFailed (with the end of the log) if
    it does not within `startup_timeout` seconds. On exit it stops the service with SIGTERM, waits
    for in-flight requests, and ends any process of the service still alive, so none is left.
    """
    config = with_free_port(config.checked())
    with tempfile.TemporaryDirectory(prefix="dbladder-run-") as folder:
        log_path = Path(folder) / "service.log"
        service = RunningService(config, _launch(config, log_path, place), log_path, place=place)
        try:
            _wait_until_ready(service, time.monotonic() + startup_timeout)
            yield service
        finally:
            service.stop()


def _launch(
    config: ServiceConfig, log_path: Path, place: Callable[[], None] | None = None
) -> subprocess.Popen[bytes]:
    """`python -m dbladder.service` in a session of its own, its output appended to `log_path`.

    Its temporary files (the counters, the writer's socket) go under the log's folder (TMPDIR),
    so that they go with it even when the service was killed and could not remove them itself.
    """
    with open(log_path, "ab") as log_file:
        return subprocess.Popen(
            [sys.executable, "-m", "dbladder.service"],
            env={**os.environ, CONFIG_ENV: config.to_json(), "TMPDIR": str(log_path.parent)},
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: nothing of it can outlive the block
            preexec_fn=place,
        )


def _wait_until_ready(service: RunningService, deadline: float) -> None:
    while True:
        if service.process.poll() is not None:
            raise ServiceFailed(
                f"the service exited with code {service.process.returncode}:\n{_tail(service.log())}"
            )
        try:
            response = service.request("GET", "/stats", timeout=1.0)
            if response.status == 200 and response.body["ready_workers"] >= service.config.workers:
                return
        except (OSError, http.client.HTTPException):
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise ServiceFailed(
                f"the service did not answer on {service.url} in time:\n{_tail(service.log())}"
            )
        time.sleep(0.05)


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def stop_process_tree(process: subprocess.Popen[bytes], timeout: float, signalled: bool = False) -> None:
    """SIGTERM a process started in its own session (unless `signalled`: it already has it), wait
    up to `timeout`, then SIGKILL whatever of that session remains."""
    if process.poll() is None:
        if not signalled:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    deadline = time.monotonic() + 5.0
    while leftovers := session_members(process.pid):
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            break
        time.sleep(0.02)


def service_process_role(pid: int) -> str:
    """What a process of the service's session is, as the run's figures name it: "server" (granian's
    main process, which starts and watches the others), "worker" (one event loop serving requests),
    "writer" (the single SQLite writer), "tracker" (multiprocessing's resource tracker); another
    program's process (a user's app, `--app`) by its name; "?" once it has gone."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, IndexError):
        return "?"
    command = b" ".join(argv)
    if b"dbladder.service" in command:
        # After the command name: state, ppid, pgrp, session. The leader of its session is the
        # process `running_service` started; its workers are granian's forks of it.
        return "server" if fields[3] == str(pid) else "worker"
    if b"multiprocessing.resource_tracker" in command:
        return "tracker"
    if b"multiprocessing.spawn" in command and _session_runs_service(int(fields[3])):
        return "writer"  # the keeper's spawned process: the only one the service starts
    return name or "?"


def _session_runs_service(session_id: int) -> bool:
    try:
        return b"dbladder.service" in Path(f"/proc/{session_id}/cmdline").read_bytes()
    except OSError:
        return False


def session_members(session_id: int) -> list[int]:
    """Ids of live processes in a session (from /proc; empty where there is none)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command name: state, ppid, pgrp, session. Zombies are already dead.
        if fields[3] == str(session_id) and fields[0] != "Z":
            members.append(int(entry.name))
    return members
