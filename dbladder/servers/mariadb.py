"""MariaDB as a managed server: mariadb-install-db into the instance's folder, then mariadbd on it.

The programs come from the Debian package `mariadb-server` (mariadbd in /usr/sbin,
mariadb-install-db on PATH). Both read only the instance's own `my.cnf` (`--defaults-file` first
on their command lines), never /etc/mysql, which configures the machine's shared server. As root,
mariadbd runs as the `mysql` OS user when it exists (`--user=`), else as root. The `root` account
has an empty password, as on the machine's shared server, and may connect over TCP from
127.0.0.1; the server listens on 127.0.0.1 only and on a socket in the instance's folder.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
from pathlib import Path
from typing import ClassVar

from .errors import ServerBinariesMissing
from .kind import DATABASE, LOOPBACK, Layout, OsUser, ServerKind, run_program, running_as_root, setting_bytes

SEARCH_FOLDERS = ("/usr/sbin", "/usr/bin", "/usr/libexec", "/usr/local/sbin", "/usr/local/bin")
OS_USER = "mysql"


def _find(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or shutil.which(name, path=":".join(SEARCH_FOLDERS))
        if found:
            return found
    return None


class MariaDBServer(ServerKind):
    engine = "mariadb"
    title = "MariaDB"
    package = "mariadb-server"
    program = "mariadbd"
    # Durable as the published "Postgres vs MariaDB on two dedicated CPUs" set it (the log flushed
    # at every commit, no binary log, READ COMMITTED), with a small memory footprint.
    defaults: ClassVar[dict[str, str]] = {
        "innodb_flush_log_at_trx_commit": "1",
        "innodb_doublewrite": "1",
        "skip_log_bin": "",
        "transaction_isolation": "READ-COMMITTED",
        "max_connections": "200",
        "innodb_buffer_pool_size": "128M",
    }
    reserved = frozenset(
        {"bind_address", "port", "socket", "datadir", "user", "pid_file", "skip_networking", "basedir"}
    )
    stop_signal = signal.SIGTERM
    # mariadbd holds nothing outside its folder, so its data can go without a shutdown, which
    # could take a while with a large buffer pool to flush.
    discard_signal = signal.SIGKILL
    crash_recovery_marker = "Starting crash recovery"
    # Besides its buffer pool: the log buffer, the connections' buffers and the server itself.
    # Measured: mariadbd held 130 MB resident with a 32 MB pool while it loaded, and under a 128M
    # cap the kernel killed it mid-seed; with the same pool under 256M it loaded and served.
    buffers_setting = "innodb_buffer_pool_size"
    memory_besides_buffers = 128 << 20

    def buffers_bytes(self, value: str) -> int | None:
        # my.cnf's suffixes; a bare number is bytes.
        units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
        return setting_bytes(value, units, bare=1)

    @staticmethod
    def normalise(name: str) -> str:
        # my.cnf treats - and _ in option names alike.
        return name.strip().lower().replace("-", "_")

    def find_binaries(self) -> dict[str, str]:
        server = _find("mariadbd", "mysqld")
        install = _find("mariadb-install-db", "mysql_install_db")
        if server is None or install is None:
            missing = " and ".join(
                n for n, p in (("mariadbd", server), ("mariadb-install-db", install)) if not p
            )
            raise ServerBinariesMissing(
                f"MariaDB's server programs ({missing}) are not installed: not on PATH nor in "
                f"{', '.join(SEARCH_FOLDERS)}; install the Debian package {self.package}"
            )
        return {"mariadbd": server, "mariadb-install-db": install}

    def os_user(self) -> OsUser | None:
        if not running_as_root():
            return None
        # mariadbd runs as root only when told --user=root; the package's own user is better.
        return OsUser.named(OS_USER)

    def version(self, binaries: dict[str, str]) -> str:
        done = subprocess.run(
            [binaries["mariadbd"], "--version"], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    def socket_path(self, layout: Layout, port: int) -> Path:
        return layout.folder / "mariadbd.sock"

    def settings_path(self, layout: Layout) -> Path:
        return layout.folder / "my.cnf"

    def temporary_path(self, layout: Layout) -> Path:
        return layout.folder / "tmp"

    @staticmethod
    def _run_as(user: OsUser | None) -> str | None:
        """mariadbd's --user: the OS user, or root when there is none (it runs as root only if told)."""
        if user is not None:
            return user.name
        return "root" if running_as_root() else None

    def create(
        self,
        layout: Layout,
        binaries: dict[str, str],
        user: OsUser | None,
        port: int,
        settings: dict[str, str],
        host: str = LOOPBACK,
    ) -> None:
        fixed = {
            "datadir": str(layout.data),
            "port": str(port),
            "bind_address": host,
            "socket": str(self.socket_path(layout, port)),
            "pid_file": str(layout.folder / "mariadbd.pid"),
            # Accounts are matched by address: no DNS lookup for each connection.
            "skip_name_resolve": "",
            # Its temporary tables in its own folder, not the machine's /tmp: there another
            # program's clean-up could take one away mid-statement (install-db then aborts on
            # "Could not remove temporary table"), and the files go with the instance.
            "tmpdir": str(self.temporary_path(layout)),
        }
        self.temporary_path(layout).mkdir(exist_ok=True)
        if user is not None:
            user.own(self.temporary_path(layout))
        run_as = self._run_as(user)
        if run_as:
            fixed["user"] = run_as
        lines = [
            "# Written by dbladder for this managed instance; the only file mariadbd reads.",
            "[mariadbd]",
        ]
        for name, value in {**fixed, **settings}.items():
            option = name.replace("_", "-")
            lines.append(f"{option}={value}" if value != "" else option)
        self.settings_path(layout).write_text("\n".join(lines) + "\n")
        # install-db runs as this process's user: as root it hands the folder to --user itself.
        command = [
            binaries["mariadb-install-db"],
            f"--defaults-file={self.settings_path(layout)}",
            f"--datadir={layout.data}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
            *([f"--user={run_as}"] if run_as else []),
        ]
        run_program(command, None, layout.folder, "mariadb-install-db")

    def command(self, layout: Layout, binaries: dict[str, str]) -> list[str]:
        return [binaries["mariadbd"], f"--defaults-file={self.settings_path(layout)}"]

    def identity_argument(self, layout: Layout) -> str:
        return f"--defaults-file={self.settings_path(layout)}"

    async def connect(self, layout: Layout, port: int, create_database: bool) -> None:
        import asyncmy

        async with asyncio.timeout(3):
            connection = await asyncmy.connect(
                unix_socket=str(self.socket_path(layout, port)), user="root", password="", connect_timeout=2
            )
            try:
                if create_database:
                    async with connection.cursor() as cursor:
                        await cursor.execute(f"CREATE DATABASE `{DATABASE}`")
            finally:
                await connection.ensure_closed()

    def url(self, port: int, host: str = LOOPBACK) -> str:
        return f"mariadb://root@{host}:{port}/{DATABASE}"

    def socket_url(self, layout: Layout, port: int) -> str:
        return f"mariadb://root@localhost/{DATABASE}?unix_socket={self.socket_path(layout, port)}"
