"""The run's database as the app's environment: DATABASE_URL in the form frameworks read, and
the same pieces apart, so an app can use whichever its framework takes.

    DATABASE_URL         postgres://user@host:port/name, mysql://user@host:port/name,
                         sqlite:////abs/path.db (dj-database-url, Rails, Prisma, Knex read these)
    DBLADDER_DB_ENGINE   sqlite, postgresql or mariadb
    DBLADDER_DB_HOST, DBLADDER_DB_PORT, DBLADDER_DB_NAME, DBLADDER_DB_USER   (servers)
    DBLADDER_DB_PATH     (SQLite: the absolute path of the file)

A password is never in DATABASE_URL (a framework may log it, `ps e` shows it): it goes only in
the variable the engine's own client reads, PGPASSWORD or MYSQL_PWD, which psycopg, libpq,
PyMySQL's callers and mysql clients know, and in DBLADDER_DB_PASSWORD for an app that wants it
by name. `secrets` gives what the app's log must never show.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from ..engine_registry import known_kinds
from ..engines.dialect import dialect_of
from ..urls import DatabaseURL

PREFIX = "DBLADDER_DB_"


def file_path(url: DatabaseURL) -> Path:
    """The absolute path of an in-process engine's file, SQLite's (the app runs in its own folder)."""
    return Path(url.path or "").expanduser().resolve()


def server_host(url: DatabaseURL) -> str:
    """Where the server listens: the URL's host, or its ?host= / ?unix_socket= folder or file."""
    return url.host or url.params.get("host") or url.params.get("unix_socket") or "127.0.0.1"


def server_port(url: DatabaseURL) -> int:
    """The server's port, the engine's default when the URL names none."""
    endpoint = dialect_of(url).endpoint(url)
    return endpoint.port if endpoint is not None else 0


def database_url_for_app(url: DatabaseURL) -> str:
    """DATABASE_URL for the app: the scheme frameworks read for the engine (its registration's
    `app_scheme`), no password, a SQLite path absolute."""
    scheme = url.kind.app_scheme
    if url.kind.in_process:
        return f"{scheme}:///{file_path(url)}"
    host = server_host(url)
    where = quote(host, safe="") if host.startswith("/") else host
    user = quote(url.user, safe="") + "@" if url.user else ""
    port = server_port(url)
    return f"{scheme}://{user}{where}:{port}/{quote(url.database or '', safe='')}"


def app_environment(url: DatabaseURL, port: int | None = None) -> dict[str, str]:
    """The variables the app's command (and its setup) gets over dbladder's own environment."""
    environment = {"DATABASE_URL": database_url_for_app(url), PREFIX + "ENGINE": url.engine}
    if url.kind.in_process:
        environment[PREFIX + "PATH"] = str(file_path(url))
    else:
        environment[PREFIX + "HOST"] = server_host(url)
        environment[PREFIX + "PORT"] = str(server_port(url))
        environment[PREFIX + "NAME"] = url.database or ""
        environment[PREFIX + "USER"] = url.user or ""
        if url.password:
            if url.kind.password_variable is not None:
                environment[url.kind.password_variable] = url.password
            environment[PREFIX + "PASSWORD"] = url.password
    if port is not None:
        environment["PORT"] = str(port)
    return environment


def secrets(environment: Mapping[str, str]) -> tuple[str, ...]:
    """The values in `environment` that no log may show: the passwords."""
    variables = [kind.password_variable for kind in known_kinds() if kind.password_variable is not None]
    names = (*variables, PREFIX + "PASSWORD")
    return tuple(
        sorted({environment[name] for name in names if environment.get(name)}, key=len, reverse=True)
    )
