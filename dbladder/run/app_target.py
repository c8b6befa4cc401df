"""The user's app as the round's load target (`--app`): its setup run once, the app started on the
run's database with the rows its requests draw from (read once, when the round checked the
workload's SQL), its sessions logged in, and a watch on it while the load runs, so that an app
that exits mid-level stops the load with one line.

    run_app_setup(config, progress)            # --app-setup, before anything is loaded
    ... workload.check_sql(engine) ...         # the rows read, every query tried (run/preparation.py)
    with app_target(config, config.app, workload, progress) as target:   # ready, its sessions made
        with AppWatch(target.service, fleet.stop, lambda: fleet.origin):
            ... the load ...

The app's output, the setup's first, goes to `app.log` in the run's folder with its passwords
redacted (dbladder.app.process).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..app import app_environment, run_setup, running_app
from ..app.errors import AppExited
from ..app.process import AppCommand, RunningApp
from ..app.sessions import make_sessions
from ..app.workload import AppWorkload, save_state
from ..data.seeding import SeedReport
from ..engines import opened
from ..engines.base import EngineOptions
from ..load.acknowledged import AcknowledgedWrites
from ..result.context import AppSection
from ..result.run import Service
from ..urls import DatabaseURL
from ..workloads.base import Draw, Workload
from .config import RunConfig
from .load_target import LoadTarget
from .progress import Progress

if TYPE_CHECKING:
    from ..service.server import RunningService

APP_LOG = "app.log"
WATCH_INTERVAL = 0.1


EXIT_GRACE_S = 1.0
"""How long an app whose answers failed before the first level may take to be seen exiting."""


def run_app_setup(config: RunConfig, progress: Progress) -> float | None:
    """Run --app-setup once on the run's database (its output at the head of app.log); the
    seconds it took, None when there is none. AppSetupFailed (exit 1) when it fails."""
    app = config.app
    if app is None or app.setup is None:
        return None
    progress.message(f"the app's setup: {app.setup}")
    seconds = run_setup(app.setup, app.directory, app_environment(config.url), config.out_dir / APP_LOG)
    progress.message(f"the app's setup finished in {seconds:.1f} s")
    return seconds


async def _checked(url: DatabaseURL, workload: AppWorkload) -> None:
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        await workload.check_sql(engine)


@contextlib.contextmanager
def app_target(
    config: RunConfig, command: AppCommand, workload: AppWorkload, progress: Progress
) -> Iterator[LoadTarget]:
    """The app running and ready for the block, its sessions logged in, as the load's target: the
    app (stopped and started by the service faults as dbladder's service is), its description for
    the result (how many times it started, added when the block ends), and the workload text the
    generator processes load it by; stopped on any exit.

    `workload` is the round's, whose SQL the round checked when it prepared the database
    (`AppWorkload.check_sql`): the `Param.rows` values read then go on to the load as they are,
    not read again. A workload not checked yet is checked here, before the app starts. `command`
    is the config's --app."""
    declared = workload.declared
    if not set(declared.row_queries()) <= set(workload.rows):
        asyncio.run(_checked(config.url, workload))
    rows = workload.rows
    environment = app_environment(config.url)
    with (
        tempfile.TemporaryDirectory(prefix="dbladder-app-") as folder,
        running_app(command, environment, config.out_dir / APP_LOG) as app,
    ):
        progress.message(f"the app answers {command.ready_path} on {app.url}: {app.command}")
        sessions = make_sessions(
            app.config.host, app.port, declared.start, declared.sessions, declared.headers
        )
        if sessions:
            how = "logged in at" if declared.login is not None else "started by a visit to"
            progress.message(f"{len(sessions)} session(s) {how} {declared.start.path}")  # type: ignore[union-attr]
        text = save_state(Path(folder) / "state.json", declared, rows, sessions)
        described = Service(
            url=app.url, started_by_dbladder=True, app=True, command=app.command, sessions=len(sessions)
        )
        target = LoadTarget(app.config.host, app.port, described, cast("RunningService", app), workload=text)
        yield target
        target.described = described.updated({"starts": app.starts})


class AppWatch:
    """A thread that notices the app exiting while the load runs (not when a fault stopped it):
    it stops the load at once and keeps the exit code and when it happened (`words`)."""

    def __init__(self, app: RunningApp, stop_load: Callable[[], None], origin: Callable[[], float]):
        self.app = app
        self.stop_load = stop_load
        self.origin = origin
        self.code: int | None = None
        self.at_s: float | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="app-watch", daemon=True)

    def __enter__(self) -> AppWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join(2.0)

    def _watch(self) -> None:
        while not self._done.wait(WATCH_INTERVAL):
            code = self.app.exit_code()
            if code is not None and not self.app.stopping:
                self.code, self.at_s = code, max(0.0, time.perf_counter() - self.origin())
                self.stop_load()
                return

    @property
    def exited(self) -> bool:
        return self.code is not None

    @property
    def words(self) -> str:
        return f"the app exited with code {self.code} at {self.at_s:.1f} s"


def raise_if_exited(app: RunningApp, during: str, answers_failed: bool = False) -> None:
    """AppExited (exit 1) when the app dbladder started exited during `during` (the warm-up, the
    calibration): before the first level, with nothing measured, there is nothing to go on with.
    When some of its answers failed it is given EXIT_GRACE_S to be seen exiting: an app that dies
    fails every later request at once (connection refused), so the warm-up can end before its
    shell has seen it go, and the first level then named what the warm-up had met."""
    if (code := app.exit_code(EXIT_GRACE_S if answers_failed else 0.0)) is not None:
        raise AppExited(f"the app exited with code {code} during {during}, before the first level")


def app_section(
    before: AppSection | None, acknowledged: AcknowledgedWrites, watch: AppWatch | None
) -> AppSection:
    """The result's `app` block: the setup's time, the log (`before`: as the setup left it), the
    first failures of each kind, how the app exited if it did during the load."""
    section = before.to_json() if before is not None else {}
    section["failures"] = acknowledged.failures.to_list()
    if watch is not None and watch.exited:
        section["exited"] = {"code": watch.code, "at_s": round(watch.at_s or 0.0, 1), "words": watch.words}
    return AppSection.from_json(section)


def setup_maker(config: RunConfig, url: DatabaseURL, log: Path) -> Callable[[Any], Awaitable[SeedReport]]:
    """How a comparison makes the app's data on one database (FreshData's `make`): --app-setup
    run to its end, its output in `log` (none: the data as it is); FreshData then snapshots it."""
    app = config.app
    assert app is not None  # the caller's check

    async def make(engine: Any) -> SeedReport:
        if app.setup is None:  # no setup: the data already there is what every run starts from
            return SeedReport((), 0.0, 0.0)
        environment = app_environment(url)
        seconds = await asyncio.to_thread(run_setup, app.setup, app.directory, environment, log)
        return SeedReport((), 0.0, seconds)

    return make


def app_probe(host: str, port: int, workload: Workload) -> Callable[[], bool]:
    """The faults' probe for the app: one of the request file's reads (the first GET), on its first
    session, answered with one of that request's success statuses within a second."""
    reads = [index for index, operation in enumerate(workload.operations) if not operation.write]
    if not reads:
        return lambda: _status(host, port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n") is not None
    index = reads[0]
    operation = workload.operations[index]
    args = operation.draw(Draw(random.Random(0).random), {})
    rendered = workload.http_renderer(f"{host}:{port}")((index, args))  # type: ignore[misc]
    success = set(cast(AppWorkload, workload).declared.requests[index].success)

    def probe() -> bool:
        return _status(host, port, rendered) in success

    return probe


def _status(host: str, port: int, request: bytes) -> int | None:
    """The status a request is answered with within a second, or None."""
    try:
        with socket.create_connection((host, port), timeout=1.0) as connection:
            connection.sendall(request)
            head = connection.recv(64)
        return int(head[9:12]) if head.startswith(b"HTTP/1.") else None
    except (OSError, ValueError):
        return None
