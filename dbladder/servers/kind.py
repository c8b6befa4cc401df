"""What every managed server engine provides, and the pieces they share.

A managed server lives in one folder of its own (`Layout`): its data folder, its settings file, its
Unix socket, its log and `server.json`, the record another process reads to find it. Each engine
(`postgres.py`, `mariadb.py`) says how to find its programs, create a data folder, write its
settings, start the server and check that it accepts connections; `managed.py` does the rest the
same way for both.
"""

from __future__ import annotations

import os
import pwd
import re
import signal
import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from .errors import BadServerSpec, ServerStartFailed

# The database every managed server gets, named in its URL.
DATABASE = "dbladder"

# A Unix socket path must fit in sockaddr_un.sun_path: 108 bytes with the terminating NUL.
MAX_SOCKET_PATH = 107

_SETTING_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_SIZE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")

LOOPBACK = "127.0.0.1"
"""Where a managed server listens unless told another address of this machine (`host`)."""


def setting_bytes(value: str, units: dict[str, int], bare: int) -> int | None:
    """A size setting in bytes: a number with one of `units` (case-insensitive), or bare, in units
    of `bare` bytes; None for anything else."""
    match = _SIZE.match(value)
    if match is None:
        return None
    number, unit = int(match.group(1)), match.group(2).lower()
    if not unit:
        return number * bare
    return number * units[unit] if unit in units else None


@dataclass(frozen=True)
class Layout:
    """Where an instance keeps its files: everything under one folder, removed as a whole."""

    folder: Path

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    @property
    def record(self) -> Path:
        return self.folder / "server.json"


@dataclass(frozen=True)
class OsUser:
    """The operating-system user a server runs as, when it is not this process's own."""

    name: str
    uid: int
    gid: int

    @classmethod
    def named(cls, name: str) -> OsUser | None:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            return None
        return cls(name, entry.pw_uid, entry.pw_gid)

    def popen_args(self) -> dict[str, Any]:
        """subprocess arguments that run a child as this user, without root's supplementary groups."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def own(self, path: Path) -> None:
        os.chown(path, self.uid, self.gid)


def running_as_root() -> bool:
    return os.geteuid() == 0


def run_program(command: list[str], user: OsUser | None, cwd: Path, what: str, timeout: float = 120) -> str:
    """Run a setup program (initdb, mariadb-install-db) to completion; its output, or
    ServerStartFailed with the last lines of that output."""
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **(user.popen_args() if user else {}),
        )
    except subprocess.TimeoutExpired:
        raise ServerStartFailed(f"{what} did not finish within {timeout:g} s") from None
    output = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        raise ServerStartFailed(f"{what} failed (exit code {done.returncode}): {last_lines(output)}")
    return output


def last_lines(text: str, count: int = 3) -> str:
    """The last non-blank lines of a program's output, on one line, for an error message."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " / ".join(lines[-count:]) if lines else "(no output)"


class ServerKind(ABC):
    """One database server program, as dbladder starts and stops it."""

    engine: ClassVar[str]  # the engine name in dbladder URLs
    title: ClassVar[str]  # for messages: "PostgreSQL"
    package: ClassVar[str]  # the Debian package with the server programs
    program: ClassVar[str]  # the server process's executable name, to recognise it
    # Whether it may listen on another address than loopback (`host`): its clients there get in
    # as on loopback (PostgreSQL: trust on the address's subnets). MariaDB's root is local only.
    other_hosts: ClassVar[bool] = False
    # Settings written to the instance's settings file unless the caller overrides them.
    defaults: ClassVar[dict[str, str]]
    # Settings dbladder itself sets (address, port, socket, folders): a caller may not change them.
    reserved: ClassVar[frozenset[str]]
    # The signal that asks for a clean, fast shutdown.
    stop_signal: ClassVar[signal.Signals]
    # The signal that ends a server whose data is about to be deleted: quick, but releasing
    # everything the server holds outside its folder.
    discard_signal: ClassVar[signal.Signals]
    # A line the server logs when it starts after a crash (what a kill -9 leaves behind).
    crash_recovery_marker: ClassVar[str]
    # The setting that sizes the server's own cache of its data, and what the server needs besides
    # that cache to load and serve under a memory cap (`room_needed`; measured, docs/design.md).
    buffers_setting: ClassVar[str]
    memory_besides_buffers: ClassVar[int]

    @staticmethod
    def normalise(name: str) -> str:
        """A setting's name as compared with the defaults and the reserved names."""
        return name.strip().lower()

    def settings_with(self, overrides: dict[str, str]) -> dict[str, str]:
        """The defaults with the caller's overrides applied, or BadServerSpec naming every problem."""
        problems = []
        settings = dict(self.defaults)
        for raw_name, value in overrides.items():
            name = self.normalise(raw_name)
            if not _SETTING_NAME.match(name):
                problems.append(f"{raw_name!r} is not a setting name")
            elif name in self.reserved:
                problems.append(f"{name} is set by dbladder for every managed {self.title} server")
            elif any(char in str(value) for char in "\n\r\0"):
                problems.append(f"the value of {name} must be one line")
            else:
                settings[name] = str(value)
        if problems:
            raise BadServerSpec(f"cannot use these {self.title} settings: " + "; ".join(problems))
        return settings

    def buffers_bytes(self, value: str) -> int | None:
        """The value of `buffers_setting` in bytes, as the server reads it (None: not a size)."""
        return None

    def room_needed(self, settings: dict[str, str]) -> tuple[str, int] | None:
        """(the buffers setting's value, the least memory cap this server runs under with these
        settings applied over the defaults); None when the buffers' size cannot be read."""
        value = self.settings_with(settings).get(self.buffers_setting)
        size = self.buffers_bytes(value) if value is not None else None
        if value is None or size is None:
            return None
        return value, size + self.memory_besides_buffers

    def check_socket_path(self, layout: Layout, port: int) -> None:
        path = str(self.socket_path(layout, port))
        if len(path.encode()) > MAX_SOCKET_PATH:
            raise BadServerSpec(
                f"the socket path {path} is longer than the {MAX_SOCKET_PATH} bytes a Unix socket allows; "
                "choose a shorter base folder"
            )

    def crash_leftovers(self, layout: Layout) -> bool:
        """Whether a server that is not running left something outside its folder that only its
        own next start releases (PostgreSQL's shared memory after a kill)."""
        return False

    @abstractmethod
    def find_binaries(self) -> dict[str, str]:
        """The absolute paths of the programs needed, or ServerBinariesMissing naming the package."""

    @abstractmethod
    def os_user(self) -> OsUser | None:
        """The user the server runs as when this process is root (None: this process's own user)."""

    @abstractmethod
    def version(self, binaries: dict[str, str]) -> str:
        """The server program's version line."""

    @abstractmethod
    def socket_path(self, layout: Layout, port: int) -> Path:
        """The server's Unix socket file."""

    @abstractmethod
    def settings_path(self, layout: Layout) -> Path:
        """The settings file dbladder writes."""

    @abstractmethod
    def create(
        self,
        layout: Layout,
        binaries: dict[str, str],
        user: OsUser | None,
        port: int,
        settings: dict[str, str],
        host: str = LOOPBACK,
    ) -> None:
        """Create the data folder (initdb, mariadb-install-db) and write the settings file: the
        fixed address (`host`), port and socket, then `settings`."""

    @abstractmethod
    def command(self, layout: Layout, binaries: dict[str, str]) -> list[str]:
        """The command line that runs the server in the foreground."""

    @abstractmethod
    def identity_argument(self, layout: Layout) -> str:
        """One argument of the server's command line that names this instance's folder: a process
        whose command line lacks it is not ours."""

    @abstractmethod
    async def connect(self, layout: Layout, port: int, create_database: bool) -> None:
        """Connect once over the socket (and create the `dbladder` database); raises while the
        server does not accept connections yet."""

    @abstractmethod
    def url(self, port: int, host: str = LOOPBACK) -> str:
        """The TCP URL of the `dbladder` database, as dbladder's engines read it."""

    @abstractmethod
    def socket_url(self, layout: Layout, port: int) -> str:
        """The Unix-socket URL of the `dbladder` database."""
