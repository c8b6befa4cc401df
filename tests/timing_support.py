"""Where the suite's time goes: a pytest plugin that `scripts/test-times` turns on.

With DBLADDER_TEST_TIMES=FOLDER set, every pytest process (each xdist worker too) writes one JSON
file there: per test, the seconds of its setup, call and teardown and when it started (wall
clock); per fixture set up, the seconds its setup took (a session fixture counts once, against
the test that first needed it); and the seconds the test's own process spent inside each of a
few kinds of waiting, counted inclusively (a run that seeds counts under both):

    seeding          dbladder.data.seeding.seed: loading a workload's rows into a database
    managed server   ManagedServer.start and .restart: a throwaway server of dbladder's own
    in-process run   run_round and run_compare: a whole round in the test's process
    subprocess wait  Popen.wait and .communicate (so subprocess.run and check_output too)
    sleep            time.sleep in the test's process

What a subprocess does inside itself is in "subprocess wait" as a whole. Without the variable the
plugin is not loaded (tests/conftest.py), and nothing is wrapped.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_current: dict[str, float] = defaultdict(float)
"""The waiting of the test running now, by kind (reset as each test starts)."""
_tests: dict[str, dict[str, Any]] = {}


def _timed(kind: str, function: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(function, "_timed_kind", None):
        return function
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def waiting_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                _current[kind] += time.perf_counter() - started

        waiting_async._timed_kind = kind  # type: ignore[attr-defined]
        return waiting_async

    @functools.wraps(function)
    def waiting(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _current[kind] += time.perf_counter() - started

    waiting._timed_kind = kind  # type: ignore[attr-defined]
    return waiting


def _wrap(owner: Any, name: str, kind: str) -> None:
    setattr(owner, name, _timed(kind, getattr(owner, name)))


def _wrap_all() -> None:
    from dbladder.data import seeding
    from dbladder.run import compare
    from dbladder.run import round as one_round
    from dbladder.servers.managed import ManagedServer

    _wrap(time, "sleep", "sleep")
    _wrap(subprocess.Popen, "wait", "subprocess wait")
    _wrap(subprocess.Popen, "communicate", "subprocess wait")
    _wrap(seeding, "seed", "seeding")
    _wrap(ManagedServer, "start", "managed server")
    _wrap(ManagedServer, "restart", "managed server")
    _wrap(one_round, "run_round", "in-process run")
    _wrap(compare, "run_compare", "in-process run")


def _record(nodeid: str) -> dict[str, Any]:
    return _tests.setdefault(nodeid, {"phases": {}, "fixtures": {}, "waiting": {}})


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Iterator[None]:
    started = time.perf_counter()
    yield
    # A fixture a session-wide one needs first is set up for the session itself (no test's node).
    fixtures = _record(request.node.nodeid or "(session)")["fixtures"]
    key = f"{fixturedef.argname} ({fixturedef.scope})"
    fixtures[key] = fixtures.get(key, 0.0) + time.perf_counter() - started


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    _current.clear()
    _record(item.nodeid)["started"] = time.time()  # wall clock: lines a test up with other readings
    yield
    _record(item.nodeid)["waiting"] = {kind: round(seconds, 4) for kind, seconds in _current.items()}


def pytest_runtest_logreport(report: Any) -> None:
    _record(report.nodeid)["phases"][report.when] = round(report.duration, 4)


def pytest_configure(config: Any) -> None:
    _wrap_all()


def pytest_sessionfinish(session: Any) -> None:
    folder = Path(os.environ["DBLADDER_TEST_TIMES"])
    folder.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    document = {"worker": worker, "pid": os.getpid(), "tests": _tests}
    (folder / f"times-{worker}-{os.getpid()}.json").write_text(json.dumps(document))
