"""PostgreSQL as a managed server: initdb into the instance's folder, then `postgres -D` on it.

The programs come from the Debian package `postgresql` (`/usr/lib/postgresql/<version>/bin`; the
newest version there wins), or from PATH. PostgreSQL refuses to run as root, so when dbladder runs
as root the data folder belongs to the `postgres` OS user and initdb and the server run as that
user. Authentication is `trust` for the `postgres` role; the server listens on 127.0.0.1 only (or on
the one address of this machine it is given, trusting the clients on that address's subnets) and
on a socket in the instance's folder.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
from pathlib import Path
from typing import ClassVar

from .errors import ServerBinariesMissing, ServerUserMissing
from .kind import DATABASE, LOOPBACK, Layout, OsUser, ServerKind, run_program, running_as_root, setting_bytes

DEBIAN_BIN_ROOT = Path("/usr/lib/postgresql")
ROLE = "postgres"


def _version_key(folder: Path) -> tuple[int, ...]:
    """'15' -> (15,), '9.6' -> (9, 6); a folder that is not a version sorts first."""
    try:
        return tuple(int(part) for part in folder.name.split("."))
    except ValueError:
        return (-1,)


def _quote(value: str) -> str:
    """A postgresql.conf value: every value may be quoted, and a quote inside is doubled."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


class PostgresServer(ServerKind):
    engine = "postgresql"
    title = "PostgreSQL"
    package = "postgresql"
    program = "postgres"
    other_hosts = True
    # Durable as the published "Postgres vs MariaDB on two dedicated CPUs" set it (fsync and
    # synchronous_commit on, no replication WAL), with a small memory footprint: several instances
    # and a benchmark share this machine.
    defaults: ClassVar[dict[str, str]] = {
        "fsync": "on",
        "synchronous_commit": "on",
        "full_page_writes": "on",
        "wal_level": "minimal",
        "max_wal_senders": "0",
        "max_connections": "200",
        "shared_buffers": "128MB",
    }
    reserved = frozenset(
        {
            "listen_addresses",
            "port",
            "unix_socket_directories",
            "data_directory",
            "config_file",
            "hba_file",
            "ident_file",
            "external_pid_file",
        }
    )
    # A fast shutdown: clients are disconnected, a checkpoint is written, then the server exits.
    stop_signal = signal.SIGINT
    # Immediate shutdown: no checkpoint (the data is about to go), and unlike a SIGKILL the
    # postmaster still releases its shared memory.
    discard_signal = signal.SIGQUIT
    crash_recovery_marker = "database system was not properly shut down; automatic recovery in progress"
    # Besides its shared buffers: the postmaster and its helpers, a backend per connection, and an
    # index build's maintenance_work_mem (64MB) while it seeds. Measured under a cap: 16MB of
    # buffers loaded 400 MB and served it under 128M, 128MB of buffers 800 MB under 256M.
    buffers_setting = "shared_buffers"
    memory_besides_buffers = 96 << 20

    def buffers_bytes(self, value: str) -> int | None:
        # PostgreSQL's memory units; a bare shared_buffers counts 8 kB blocks.
        units = {"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}
        return setting_bytes(value, units, bare=8192)

    def crash_leftovers(self, layout: Layout) -> bool:
        # A killed postmaster leaves its postmaster.pid, and with it a System V shared memory
        # segment and POSIX segments in /dev/shm that stay allocated until the next start on
        # this data folder reads the file and removes them (measured: 1 MB and 45 kB per kill).
        return (layout.data / "postmaster.pid").exists()

    def find_binaries(self) -> dict[str, str]:
        folders = sorted(DEBIAN_BIN_ROOT.glob("*/bin"), key=lambda f: _version_key(f.parent), reverse=True)
        on_path = shutil.which("initdb")
        if on_path:
            folders.append(Path(on_path).resolve().parent)
        for folder in folders:
            initdb, postgres = folder / "initdb", folder / "postgres"
            if initdb.is_file() and postgres.is_file():
                return {"initdb": str(initdb), "postgres": str(postgres)}
        raise ServerBinariesMissing(
            "PostgreSQL's server programs (initdb, postgres) are not installed: not under "
            f"{DEBIAN_BIN_ROOT}/<version>/bin nor on PATH; install the Debian package {self.package}"
        )

    def os_user(self) -> OsUser | None:
        if not running_as_root():
            return None
        user = OsUser.named(ROLE)
        if user is None:
            raise ServerUserMissing(
                "PostgreSQL refuses to run as root and there is no OS user 'postgres' to run it as; "
                f"the Debian package {self.package} creates it (or run dbladder as an ordinary user)"
            )
        return user

    def version(self, binaries: dict[str, str]) -> str:
        done = subprocess.run(
            [binaries["postgres"], "--version"], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    def socket_path(self, layout: Layout, port: int) -> Path:
        return layout.folder / f".s.PGSQL.{port}"

    def settings_path(self, layout: Layout) -> Path:
        return layout.folder / "postgresql.dbladder.conf"

    def create(
        self,
        layout: Layout,
        binaries: dict[str, str],
        user: OsUser | None,
        port: int,
        settings: dict[str, str],
        host: str = LOOPBACK,
    ) -> None:
        # --no-sync: a throwaway instance does not outlive a crash of the machine (which dbladder
        # does not inject), and skipping initdb's fsync saves part of a second.
        command = [binaries["initdb"], "-D", str(layout.data), "-U", ROLE, "--auth=trust"]
        command += ["--encoding=UTF8", "--locale=C", "--no-sync"]
        run_program(command, user, layout.folder, "initdb")
        fixed = {
            "listen_addresses": host,
            "port": str(port),
            "unix_socket_directories": str(layout.folder),
        }
        lines = ["# Written by dbladder for this managed instance; read after postgresql.conf."]
        lines += [f"{name} = {_quote(value)}" for name, value in {**fixed, **settings}.items()]
        path = self.settings_path(layout)
        path.write_text("\n".join(lines) + "\n")
        # Later lines win in postgresql.conf, so the include overrides initdb's values.
        with (layout.data / "postgresql.conf").open("a") as conf:
            conf.write(f"\ninclude {_quote(str(path))}\n")
        if host != LOOPBACK:
            # initdb trusts loopback only: the other machines on the address's own network
            # (samenet: its subnets) come in as the postgres role too, as on loopback.
            with (layout.data / "pg_hba.conf").open("a") as hba:
                hba.write("\nhost all all samenet trust\n")

    def command(self, layout: Layout, binaries: dict[str, str]) -> list[str]:
        return [binaries["postgres"], "-D", str(layout.data)]

    def identity_argument(self, layout: Layout) -> str:
        return str(layout.data)

    async def connect(self, layout: Layout, port: int, create_database: bool) -> None:
        import asyncpg

        connection = await asyncpg.connect(
            host=str(layout.folder), port=port, user=ROLE, database="postgres", timeout=2
        )
        try:
            if create_database:
                await connection.execute(f'CREATE DATABASE "{DATABASE}"')
        finally:
            await asyncio.wait_for(connection.close(), 2)

    def url(self, port: int, host: str = LOOPBACK) -> str:
        return f"postgresql://{ROLE}@{host}:{port}/{DATABASE}"

    def socket_url(self, layout: Layout, port: int) -> str:
        return f"postgresql://{ROLE}@:{port}/{DATABASE}?host={layout.folder}"
