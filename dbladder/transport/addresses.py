"""How the service reaches the database: the same database by another transport, or through the relay.

    inproc   SQLite: the database is a file the service's process opens; no connection at all
    unix     PostgreSQL or MariaDB over the server's Unix socket
    tcp      PostgreSQL or MariaDB over TCP on loopback

`transport_url(url, transport)` asks the server where it listens (PostgreSQL's
unix_socket_directories, port and listen_addresses; MariaDB's socket, port, skip_networking and
bind_address), builds that form of the URL and checks that it connects. `through_relay(url,
address)` is the URL by which the service reaches the database through a relay
(`relay.Relay`), and `relay_target(url)` is where that relay connects.
"""

from __future__ import annotations

import os
from urllib.parse import quote, urlencode

from ..engines import EngineOptions, opened
from ..engines.mariadb.connection import parse_settings as mariadb_settings
from ..engines.postgres.connection import DEFAULT_HOST as POSTGRES_HOST
from ..engines.postgres.connection import DEFAULT_PORT as POSTGRES_PORT
from ..errors import DbladderError, UsageError
from ..urls import DatabaseURL, parse_url
from .relay import Target

TRANSPORTS = ("inproc", "unix", "tcp")
LOOPBACK = "127.0.0.1"


class TransportUnavailable(UsageError):
    """The engine or server offers no such transport (SQLite is in-process; a server without a socket)."""


class TransportFailed(DbladderError):
    """The server names a socket or port, but connecting that way failed."""


def transport_of(url: DatabaseURL) -> str:
    """The transport a URL uses: inproc, unix or tcp."""
    if url.engine == "sqlite":
        return "inproc"
    if url.engine == "postgresql":
        return "unix" if url.params.get("host") else "tcp"
    return "unix" if url.params.get("unix_socket") else "tcp"


def _server_url(url: DatabaseURL, host: str, port: int | None, params: dict[str, str]) -> DatabaseURL:
    """`url` with another host part and query string; user, password and database kept."""
    user = quote(url.user or "", safe="")
    # Only a password written in the URL goes into the new one: one from the environment or a
    # file is found there again by every process that opens the URL (dbladder.urls).
    if url.password and url.password_source == "the URL":
        user += ":" + quote(url.password, safe="")
    at = user + "@" if user else ""
    where = host + (f":{port}" if port else "")
    query = "?" + urlencode(params, safe="/") if params else ""
    scheme = url.raw.split("://", 1)[0]
    return parse_url(f"{scheme}://{at}{where}/{quote(url.database or '', safe='')}{query}")


def _refuse_sqlite(url: DatabaseURL, what: str) -> None:
    if url.engine == "sqlite":
        raise TransportUnavailable(
            f"SQLite runs inside the service's process: there is no connection to {what}; "
            "--transport unix/tcp and --added-latency need PostgreSQL or MariaDB"
        )


def relay_target(url: DatabaseURL) -> Target:
    """Where a relay for this database connects: the server's Unix socket or TCP address, as in the URL."""
    _refuse_sqlite(url, "relay")
    if url.engine == "postgresql":
        port = url.port or POSTGRES_PORT
        folder = url.params.get("host")
        if folder:  # libpq's convention: the socket is .s.PGSQL.<port> in that folder
            return Target(unix_path=f"{folder}/.s.PGSQL.{port}")
        return Target(host=url.host or POSTGRES_HOST, port=port)
    settings = mariadb_settings(url)
    if settings.unix_socket:
        return Target(unix_path=settings.unix_socket)
    return Target(host=settings.host, port=settings.port)


def through_relay(url: DatabaseURL, address: tuple[str, int]) -> DatabaseURL:
    """The URL that reaches the same database through a relay listening at `address`."""
    _refuse_sqlite(url, "relay")
    host, port = address
    params = {k: v for k, v in url.params.items() if k not in ("host", "unix_socket")}
    return _server_url(url, host, port, params)


async def _postgres_addresses(url: DatabaseURL) -> tuple[str | None, str | None, int]:
    """(socket folder, TCP host, port) where the PostgreSQL server of `url` listens; None: not at all."""
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        row = await session.fetch_one(
            "SELECT current_setting('unix_socket_directories'), current_setting('listen_addresses'), "
            "current_setting('port')"
        )
    assert row is not None  # a SELECT without FROM always gives one row
    folders = [f.strip() for f in str(row[0]).split(",") if f.strip() and not f.strip().startswith("@")]
    listen = [a.strip() for a in str(row[1]).split(",") if a.strip()]
    if not listen:
        host = None
    elif "*" in listen or "0.0.0.0" in listen or "localhost" in listen or LOOPBACK in listen:
        host = LOOPBACK
    else:
        host = listen[0]
    return (folders[0] if folders else None), host, int(row[2])


async def _mariadb_addresses(url: DatabaseURL) -> tuple[str | None, str | None, int]:
    """(socket path, TCP host, port) where the MariaDB server of `url` listens; None: not at all."""
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        row = await session.fetch_one("SELECT @@socket, @@port, @@skip_networking, @@bind_address")
    assert row is not None
    socket, port, skip_networking, bind = row
    if int(skip_networking or 0):
        host = None
    elif not bind or bind in ("*", "0.0.0.0", "::", "localhost", LOOPBACK):
        host = LOOPBACK
    else:
        host = str(bind).split(",")[0].strip()
    return (str(socket) if socket else None), host, int(port)


async def transport_url(url: DatabaseURL, transport: str) -> DatabaseURL:
    """The same database reached by `transport` (inproc, unix or tcp), checked by connecting."""
    if transport not in TRANSPORTS:
        raise TransportUnavailable(f"--transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if url.engine == "sqlite":
        if transport != "inproc":
            _refuse_sqlite(url, f"make over {transport}")
        return url
    if transport == "inproc":
        raise TransportUnavailable(
            f"{url.engine} is a server the service connects to: choose --transport unix or tcp"
        )
    if transport_of(url) == transport:
        return url
    if url.engine == "postgresql":
        folder, host, port = await _postgres_addresses(url)
        keep = {k: v for k, v in url.params.items() if k == "sslmode"}
        if transport == "unix":
            if folder is None:
                raise TransportUnavailable(
                    f"the PostgreSQL server of {url.redacted} has no Unix socket "
                    "(unix_socket_directories is empty)"
                )
            if not os.path.exists(f"{folder}/.s.PGSQL.{port}"):
                raise TransportUnavailable(
                    f"the PostgreSQL server's socket {folder}/.s.PGSQL.{port} is not on this machine"
                )
            named_port = port if port != POSTGRES_PORT else None
            new = _server_url(url, "", named_port, {"host": folder})
        else:
            if host is None:
                raise TransportUnavailable(
                    f"the PostgreSQL server of {url.redacted} listens on no TCP address "
                    "(listen_addresses is empty)"
                )
            new = _server_url(url, host, port, keep)
    else:
        socket, host, port = await _mariadb_addresses(url)
        keep = {k: v for k, v in url.params.items() if k == "isolation"}
        if transport == "unix":
            if socket is None or not os.path.exists(socket):
                raise TransportUnavailable(
                    f"the MariaDB server of {url.redacted} has no Unix socket on this machine "
                    f"(socket = {socket!r})"
                )
            new = _server_url(url, "localhost", None, {**keep, "unix_socket": socket})
        else:
            if host is None:
                raise TransportUnavailable(
                    f"the MariaDB server of {url.redacted} listens on no TCP port (skip_networking is on)"
                )
            new = _server_url(url, host, port, keep)
    try:
        async with opened(new, EngineOptions(pool_size=1)):
            pass
    except DbladderError as exc:
        message = f"cannot reach {url.engine} over {transport} at {new.redacted}: {exc}"
        raise TransportFailed(message) from None
    return new
