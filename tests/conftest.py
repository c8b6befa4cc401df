"""Fixtures that give each test its own real database.

SQLite tests get a file in a temporary folder. PostgreSQL and MariaDB tests get a database with a
unique name on the local server, created before the test and dropped after it (a PostgreSQL one is
emptied instead and handed to the next test, when it is then as new: tests/postgres_pool.py).
Where a server is not running, those tests skip with the reason; under CI
(DBLADDER_REQUIRE_SERVERS=1, set by .ci/run) a missing server fails them instead, so CI can never
pass by skipping.

The servers can be pointed elsewhere with DBLADDER_TEST_POSTGRES_URL and DBLADDER_TEST_MARIADB_URL
(the database part of the URL is replaced by the unique name).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import node_support
import psutil
import pytest
from database_support import MARIADB_URL, POSTGRES_URL, mariadb_admin, unique_name
from postgres_pool import PostgresDatabases

from dbladder.errors import DbladderError
from dbladder.roles.cgroups import PREFIX as CGROUP_PREFIX
from dbladder.servers.registry import ROOT_ENV
from dbladder.urls import parse_url

REQUIRE_SERVERS = os.environ.get("DBLADDER_REQUIRE_SERVERS") == "1"

# pytest rewrites every test module's asserts on import and caches the result beside it, unless
# bytecode is not to be written (PYTHONDONTWRITEBYTECODE, set on this project's machines): then
# every pytest process, each xdist worker too, spends 8-11 s rewriting 190 modules again. The cache
# is pytest's own (__pycache__, ignored by git); the library's files are not affected by this.
sys.dont_write_bytecode = False

# A suite started in the background by a shell (`... &`, as a CI script or a detached job may be)
# inherits Ctrl-C ignored, and so would every process a test starts: the tests that send one
# SIGINT (an app, a managed server or `report --serve` told to stop) would wait for nothing. The
# suite's processes take it as a terminal's foreground job does.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Where the suite's time goes (scripts/test-times): loaded only when asked for.
pytest_plugins = ["timing_support"] if os.environ.get("DBLADDER_TEST_TIMES") else []
# A serial test that fails while other work kept the machine busy is skipped with the figures.
pytest_plugins += ["busy_machine", "pytester"]

# A registry of managed servers of the suite's own (one per process, so per xdist worker): no test
# sees a server the user's own `dbladder db start` left, and none can leave one for the user.
os.environ[ROOT_ENV] = tempfile.mkdtemp(prefix=f"dbladder-test-servers-{os.getpid()}-")
os.chmod(os.environ[ROOT_ENV], 0o755)  # as root the servers run as postgres and mysql, who must reach it


def pytest_sessionstart(session) -> None:
    """In the process that hands out the tests to xdist's workers, when slow tests are not left
    out: the Node example's packages start installing now, beside the tests
    (tests/node_support.py). Not where the tests run in this process: the install's compilers
    would be processes a test seemed to leave behind."""
    config = session.config
    handing_out = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    if not handing_out or "not slow" in (config.option.markexpr or ""):
        return
    _node_install[:] = [process for process in [node_support.install_ahead()] if process is not None]


def pytest_sessionfinish(session) -> None:
    for process in _node_install:  # bounded by the install's own time-out
        process.wait(timeout=node_support.NPM_CI_TIMEOUT_S + 60)


_node_install: list[subprocess.Popen] = []


def pytest_unconfigure(config) -> None:
    with contextlib.suppress(OSError):  # a server left in it was named by the test that left it
        os.rmdir(os.environ[ROOT_ENV])


# Every run watches the machine for 2 s before it starts; the suite runs about a hundred short
# ones, and no test reads that figure's precision. Runs started as subprocesses inherit it.
os.environ.setdefault("DBLADDER_IDLE_CHECK_SECONDS", "0.25")
# So does a SQLite run with writes probe the disk's sync rate for 1 s: 0.2 s gives the rate to a
# few percent (tests/observe/test_observe_disk.py); the tests of what that rate decides set 1 s.
os.environ.setdefault("DBLADDER_FSYNC_PROBE_SECONDS", "0.2")


def _unavailable(what: str, exc: BaseException) -> None:
    message = f"{what} is not reachable ({type(exc).__name__}: {exc})"
    if REQUIRE_SERVERS:
        pytest.fail(message + "; DBLADDER_REQUIRE_SERVERS=1 makes this a failure", pytrace=False)
    pytest.skip(message)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/shop.db"


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[PostgresDatabases]:
    databases = PostgresDatabases(parse_url(POSTGRES_URL))
    try:
        yield databases
    finally:
        databases.close()


@pytest.fixture
def postgres_url(postgres_databases) -> Iterator[str]:
    """An empty database of its own; emptied after the test for the next one (tests/postgres_pool.py)."""
    admin = postgres_databases.admin
    try:
        name = postgres_databases.take()
    except Exception as exc:
        _unavailable(f"PostgreSQL at {admin.redacted}", exc)
    try:
        yield admin.with_database(name).raw
    finally:
        postgres_databases.give_back(name)


@pytest.fixture
def mariadb_url() -> Iterator[str]:
    admin = parse_url(MARIADB_URL)
    name = unique_name()
    try:
        asyncio.run(mariadb_admin(admin, f"CREATE DATABASE `{name}`"))
    except Exception as exc:
        _unavailable(f"MariaDB at {admin.redacted}", exc)
    try:
        yield admin.with_database(name).raw
    finally:
        asyncio.run(mariadb_admin(admin, f"DROP DATABASE IF EXISTS `{name}`"))


@pytest.fixture
def mariadb_user(mariadb_url) -> Iterator[tuple[str, str, str]]:
    """(user, password, database): a user with a random password, allowed the test's database
    and any database whose name starts with it (so a missing one is "unknown", not "denied")."""
    admin = parse_url(MARIADB_URL)
    database = parse_url(mariadb_url).database
    user, password = unique_name("dbladder_user")[:32], secrets.token_urlsafe(16)
    for host in ("127.0.0.1", "localhost"):
        asyncio.run(mariadb_admin(admin, f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{password}'"))
        asyncio.run(mariadb_admin(admin, f"GRANT ALL ON `{database}%`.* TO '{user}'@'{host}'"))
    try:
        yield user, password, database
    finally:
        for host in ("127.0.0.1", "localhost"):
            asyncio.run(mariadb_admin(admin, f"DROP USER IF EXISTS '{user}'@'{host}'"))


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def any_url(request) -> str:
    """A fresh, empty database on each engine in turn: the engine contract runs against all three."""
    fixture = {"sqlite": "sqlite_url", "postgresql": "postgres_url", "mariadb": "mariadb_url"}[request.param]
    return request.getfixturevalue(fixture)


# Every Popen of the test process, so the guard below can reap one that ended without a wait: its
# object, collected later in another test, would fail that test ("subprocess N is still running").
_popens: weakref.WeakSet[subprocess.Popen] = weakref.WeakSet()
_popen_init = subprocess.Popen.__init__


def _noted_popen_init(self, *args, **kwargs):
    _popen_init(self, *args, **kwargs)
    _popens.add(self)


subprocess.Popen.__init__ = _noted_popen_init  # type: ignore[method-assign]

LEFTOVER_GRACE_SECONDS = 3.0
"""How long a process the test started may take to end after the test's own teardown."""


def _children_of(pid: int) -> list[int]:
    """The PIDs `pid`'s threads started (Linux's /proc/PID/task/TID/children): a walk of this
    process's own tree, where psutil's scans every process on the machine (7 ms a test here)."""
    children = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as listing:
                children += [int(child) for child in listing.read().split()]
    except OSError:  # gone meanwhile
        pass
    return children


def _descendants() -> dict[int, psutil.Process]:
    found: dict[int, psutil.Process] = {}
    if not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"):  # not Linux's /proc
        return {process.pid: process for process in psutil.Process().children(recursive=True)}
    waiting = _children_of(os.getpid())
    while waiting:
        pid = waiting.pop()
        if pid not in found:
            with contextlib.suppress(psutil.NoSuchProcess):
                found[pid] = psutil.Process(pid)
            waiting += _children_of(pid)
    return found


# The interpreter's own helpers, started once on first use and meant to outlive the test that
# first used multiprocessing: not a test's leftovers (ending one breaks every later in-process run).
INTERPRETER_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def _running(processes: dict[int, psutil.Process]) -> dict[int, psutil.Process]:
    running = {}
    for pid, process in processes.items():
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            if any(helper in part for part in process.cmdline() for helper in INTERPRETER_HELPERS):
                continue
            running[pid] = process
        except psutil.NoSuchProcess:
            pass
    return running


@functools.cache
def _cgroup_parent() -> Path | None:
    """Where dbladder makes its memory cgroups from this process; None where it cannot."""
    from dbladder.roles.cgroups import memory_hierarchy

    try:
        return memory_hierarchy().parent
    except DbladderError:
        return None


def _our_cgroups() -> set[str]:
    """dbladder's cgroups made by this process or a process it started that is still running."""
    parent = _cgroup_parent()
    if parent is None:  # no memory cgroups here: nothing a test can leave
        return set()
    names = [path.name for path in parent.iterdir() if path.name.startswith(CGROUP_PREFIX)]
    if not names:
        return set()
    ours = {os.getpid(), *_descendants()}
    return {name for name in names if name.split("-")[1].isdigit() and int(name.split("-")[1]) in ours}


def _describe(process: psutil.Process) -> str:
    try:
        return f"{process.pid} ({' '.join(process.cmdline())[:120]})"
    except psutil.Error:
        return str(process.pid)


@pytest.fixture(autouse=True)
def _leaves_nothing_behind(request) -> Iterator[None]:
    """Fails the test that leaves a process, a managed server or a cgroup of dbladder's behind,
    naming what (and ends the processes, which the test started): a leftover would otherwise fail
    a later, unrelated test, or change what it measures."""
    registry = Path(os.environ[ROOT_ENV])
    before = set(_descendants())
    servers_before = set(os.listdir(registry))
    groups_before = _our_cgroups()
    yield
    deadline = time.monotonic() + LEFTOVER_GRACE_SECONDS
    while (left := _running({p: q for p, q in _descendants().items() if p not in before})) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    for popen in list(_popens):
        popen.poll()  # an ended child is reaped now, not warned about in a later test
    problems = []
    if left:
        problems.append("processes still running: " + ", ".join(_describe(p) for p in left.values()))
        for process in left.values():
            with contextlib.suppress(psutil.Error):
                process.send_signal(signal.SIGKILL)
        psutil.wait_procs(list(left.values()), timeout=5)
        for popen in list(_popens):
            popen.poll()
    if servers := sorted(set(os.listdir(registry)) - servers_before):
        problems.append(f"managed servers left in {registry}: {servers}")
    if groups := sorted(_our_cgroups() - groups_before):
        problems.append(f"cgroups left: {groups}")
    if problems:
        pytest.fail(f"{request.node.nodeid} left behind " + "; ".join(problems), pytrace=False)


def pytest_collection_modifyitems(config, items) -> None:
    """On xdist's workers, the slow tests dealt out first. The worksteal scheduler (the README's
    command) gives each of the n workers one contiguous n-th of this list, in order, then moves
    tests from the end of the longest queue to a worker that ran out. So each n-th is made to
    begin with every n-th slow test (in file order, so a worker's slow tests of one file share
    its module fixtures) and to end with quick ones: the tests moved at the end, and the last to
    run, are quick, where a long test started last was the tail every other worker waited for
    (the namespaces' cluster run, 89 s, ran at 99 % beside three idle workers)."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if workers < 2:
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    quick = [item for item in items if not item.get_closest_marker("slow")]
    parts: list[list] = [slow[k::workers] for k in range(workers)]
    left = len(items)
    for k, part in enumerate(parts):  # the sizes xdist cuts: len // n, then the rest // (n - 1), ...
        size = left // (workers - k)
        left -= size
        taken = max(size - len(part), 0)
        part.extend(quick[:taken])
        del quick[:taken]
    parts[-1].extend(quick)  # none, unless a part's slow tests alone were more than its size
    items[:] = [item for part in parts for item in part]
