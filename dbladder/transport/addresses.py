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

from ..engines import EngineOptions, opened
from ..engines.dialect import dialect_of
from ..errors import DbladderError, TransportFailed, TransportUnavailable
from ..urls import DatabaseURL
from .relay import RelayTarget

TRANSPORTS = ("inproc", "unix", "tcp")


def transport_of(url: DatabaseURL) -> str:
    """The transport a URL uses: inproc, unix or tcp."""
    return dialect_of(url).transport_of(url)


def _refuse_in_process(url: DatabaseURL, what: str) -> None:
    if url.kind.in_process:
        raise TransportUnavailable(
            f"SQLite runs inside the service's process: there is no connection to {what}; "
            "--transport unix/tcp and --added-latency need PostgreSQL or MariaDB"
        )


def relay_target(url: DatabaseURL) -> RelayTarget:
    """Where a relay for this database connects: the server's Unix socket or TCP address, as in the URL."""
    _refuse_in_process(url, "relay")
    endpoint = dialect_of(url).endpoint(url)
    assert endpoint is not None  # every engine with a server has one
    if endpoint.unix_path:
        return RelayTarget(unix_path=endpoint.unix_path)
    return RelayTarget(host=endpoint.host, port=endpoint.port)


def through_relay(url: DatabaseURL, address: tuple[str, int]) -> DatabaseURL:
    """The URL that reaches the same database through a relay listening at `address`."""
    _refuse_in_process(url, "relay")
    host, port = address
    params = {k: v for k, v in url.params.items() if k not in ("host", "unix_socket")}
    return url.with_host(host, port, params)


async def transport_url(url: DatabaseURL, transport: str) -> DatabaseURL:
    """The same database reached by `transport` (inproc, unix or tcp), checked by connecting."""
    if transport not in TRANSPORTS:
        raise TransportUnavailable(f"--transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if url.kind.in_process:
        if transport != "inproc":
            _refuse_in_process(url, f"make over {transport}")
        return url
    if transport == "inproc":
        raise TransportUnavailable(
            f"{url.engine} is a server the service connects to: choose --transport unix or tcp"
        )
    if transport_of(url) == transport:
        return url
    new = await dialect_of(url).reach(url, transport)
    try:
        async with opened(new, EngineOptions(pool_size=1)):
            pass
    except DbladderError as exc:
        message = f"cannot reach {url.engine} over {transport} at {new.redacted}: {exc}"
        raise TransportFailed(message) from None
    return new
