"""The Node example app (examples/node_chirp/) made ready for a test.

node and npm must be on PATH: where one is not, the test skips saying so (under
DBLADDER_REQUIRE_SERVERS=1, as CI runs, it fails instead, so CI cannot pass by skipping). The
app's packages are installed with `npm ci` once per package-lock.json and Node version, into
~/.cache/dbladder-tests/ (DBLADDER_TEST_CACHE to put it elsewhere), and reused by every later
test and session: better-sqlite3 is a native module, and where its prebuilt binary cannot be
downloaded (it comes from GitHub, not the npm registry) npm compiles it, a minute or two of CPU
once. Parallel test processes wait on a file lock for the one installing, which installs into a
temporary folder and renames it into place, so nobody sees a half-made install.

Each test gets its own copy of the app's files with `node_modules` a link to the cached one, so
nothing is written into the repository's folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REQUIRE_SERVERS = os.environ.get("DBLADDER_REQUIRE_SERVERS") == "1"
NODE_CHIRP = Path(__file__).resolve().parents[1] / "examples" / "node_chirp"
SOURCES = (
    "package.json",
    "package-lock.json",
    "server.js",
    "database.js",
    "queries.js",
    "dbladder_requests.py",
)
NPM_CI_TIMEOUT_S = 900  # compiling better-sqlite3 took 80 s of CPU on the project's 2-core machine


def unavailable(message: str) -> None:
    """Skip with `message`; fail instead under DBLADDER_REQUIRE_SERVERS=1."""
    if REQUIRE_SERVERS:
        pytest.fail(message + "; DBLADDER_REQUIRE_SERVERS=1 makes this a failure", pytrace=False)
    pytest.skip(message)


def tool(name: str) -> str:
    """The program `name` on PATH, or the test skips (fails under CI) saying it is missing."""
    path = shutil.which(name)
    if path is None:
        unavailable(f"{name} is not on PATH: the Node example app (examples/node_chirp) needs node and npm")
    return path  # type: ignore[return-value]


def cache_root() -> Path:
    return Path(os.environ.get("DBLADDER_TEST_CACHE") or Path.home() / ".cache" / "dbladder-tests")


def cached_install(node: str) -> Path:
    """Where the app's packages are kept for this package-lock.json, Node version and machine."""
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    lock = (NODE_CHIRP / "package-lock.json").read_bytes()
    # A native module is built for one Node ABI and one machine: both are in the key.
    key = hashlib.sha256(lock + f"|{version}|{platform.machine()}".encode()).hexdigest()[:16]
    return cache_root() / f"node_chirp-{key}"


def installed_modules() -> Path:
    """The app's node_modules, installed once for this package-lock.json and Node version."""
    node, npm = tool("node"), tool("npm")
    root = cache_root()
    target = cached_install(node)
    if (target / "node_modules").is_dir():
        return target / "node_modules"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "node_chirp.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another test process may be installing it right now
        if not (target / "node_modules").is_dir():
            _install(npm, root, target)
    return target / "node_modules"


def install_ahead() -> subprocess.Popen | None:
    """Start installing the app's packages in a process of its own, when node and npm are there
    and the cache misses, so that compiling better-sqlite3 (a minute of one core) overlaps the
    suite's other tests instead of holding up the worker whose Node test comes first. That test
    then waits on the same lock, and finds the packages installed (or installs them itself, and
    says why, if this install failed). The process is the caller's to wait for."""
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None or (cached_install(node) / "node_modules").is_dir():
        return None
    code = "import node_support, sys; node_support.installed_modules()"
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _install(npm: str, root: Path, target: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix=".installing-", dir=root))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(NODE_CHIRP / name, work / name)
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=NPM_CI_TIMEOUT_S,
        )
        if done.returncode != 0:
            last = " | ".join((done.stdout + done.stderr).strip().splitlines()[-6:])
            unavailable(f"npm ci of examples/node_chirp failed (exit {done.returncode}): {last}")
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def app_copy(folder: Path, modules: Path) -> Path:
    """The app's files in `folder`, its node_modules a link to `modules`."""
    folder.mkdir(parents=True)
    for name in SOURCES:
        shutil.copy2(NODE_CHIRP / name, folder / name)
    (folder / "node_modules").symlink_to(modules, target_is_directory=True)
    return folder


def processes_in(folder: Path) -> list[int]:
    """Every live process whose current folder is `folder`: the app's shell, node and its workers."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found
