"""The transport choice: the same database over its Unix socket or TCP, asked of the real servers."""

from __future__ import annotations

import asyncio

import pytest

from dbladder.engines import opened
from dbladder.transport import (
    RelayTarget,
    TransportUnavailable,
    relay_target,
    through_relay,
    transport_of,
    transport_url,
)
from dbladder.urls import parse_url


def run(coroutine):
    return asyncio.run(coroutine)


async def database_name(url: str) -> str:
    """The database a URL really reached, as its server reports it."""
    async with opened(url) as engine, engine.read() as session:
        if url.startswith("postgresql"):
            row = await session.fetch_one("SELECT current_database()")
        else:
            row = await session.fetch_one("SELECT DATABASE()")
    assert row is not None
    return str(row[0])


@pytest.mark.parametrize("fixture", ["postgres_url", "mariadb_url"])
def test_unix_and_tcp_forms_reach_the_same_database(request, fixture):
    url = parse_url(request.getfixturevalue(fixture))
    assert transport_of(url) == "tcp"
    unix = run(transport_url(url, "unix"))
    assert transport_of(unix) == "unix"
    assert unix.database == url.database
    back = run(transport_url(unix, "tcp"))
    assert transport_of(back) == "tcp"
    assert (back.host, back.port) == ("127.0.0.1", url.port)
    assert run(database_name(unix.raw)) == run(database_name(back.raw)) == url.database
    with pytest.raises(TransportUnavailable, match="is a server"):
        run(transport_url(url, "inproc"))


def test_sqlite_is_in_process_only(sqlite_url):
    url = parse_url(sqlite_url)
    assert transport_of(url) == "inproc"
    assert run(transport_url(url, "inproc")) == url
    for transport in ("unix", "tcp"):
        with pytest.raises(TransportUnavailable, match="SQLite runs inside the service's process"):
            run(transport_url(url, transport))
    with pytest.raises(TransportUnavailable, match="no connection to relay"):
        relay_target(url)
    with pytest.raises(TransportUnavailable, match="no connection to relay"):
        through_relay(url, ("127.0.0.1", 1234))


def test_an_unknown_transport_is_named():
    with pytest.raises(TransportUnavailable, match="one of inproc, unix, tcp"):
        run(transport_url(parse_url("sqlite:///x.db"), "pipe"))


def test_relay_targets_and_urls_keep_user_database_and_settings():
    pg = parse_url("postgresql://me:s3cret@/shop?host=/var/run/postgresql&sslmode=disable")
    assert relay_target(pg) == RelayTarget(unix_path="/var/run/postgresql/.s.PGSQL.5432")
    relayed = through_relay(pg, ("127.0.0.1", 40000))
    assert (relayed.user, relayed.password) == ("me", "s3cret")
    assert (relayed.host, relayed.port) == ("127.0.0.1", 40000)
    assert (relayed.database, relayed.params) == ("shop", {"sslmode": "disable"})

    maria = parse_url(
        "mariadb://root@localhost/test?unix_socket=/run/mysqld/mysqld.sock&isolation=serializable"
    )
    assert relay_target(maria) == RelayTarget(unix_path="/run/mysqld/mysqld.sock")
    relayed = through_relay(maria, ("127.0.0.1", 40001))
    assert (relayed.host, relayed.port, relayed.params) == ("127.0.0.1", 40001, {"isolation": "serializable"})
    tcp = parse_url("mariadb://root@127.0.0.1:3307/test")
    assert relay_target(tcp) == RelayTarget(host="127.0.0.1", port=3307)
