"""A round's route to the database: which transports each engine allows, and the route as recorded."""

from __future__ import annotations

import functools
import socket

import pytest

from dbladder.cluster.sampled import AppAgent
from dbladder.errors import InvalidConfig
from dbladder.run.config import RunConfig
from dbladder.run.database_route import (
    database_route,
    load_transport,
    remote_route_problems,
    route_problems,
    route_words,
)
from dbladder.transport import RelayTarget
from dbladder.urls import is_this_machine, parse_url


def test_each_engine_is_offered_only_its_own_transports():
    sqlite, postgres = "sqlite:///a.db", "postgresql://postgres@127.0.0.1/x"
    assert route_problems(sqlite, "inproc", None) == []
    assert route_problems(postgres, "unix", 2.0) == []
    assert route_problems(sqlite, None, None) == []
    assert route_problems(sqlite, "tcp", None) == [
        "SQLite runs inside the service's process: transport tcp needs PostgreSQL or MariaDB "
        "(SQLite's only transport is inproc)"
    ]
    assert route_problems(postgres, "inproc", None) == [
        "postgresql is a server the service connects to: choose transport unix or tcp"
    ]
    assert route_problems(sqlite, None, 0.5) == [
        "added latency goes between the service and a database server: SQLite has no connection to add it to"
    ]
    assert route_problems(postgres, "udp", -1) == [
        "transport must be one of inproc, unix, tcp, not 'udp'",
        "added latency must be from 0 to 1000 ms, not -1",
    ]
    assert "not by one already running" in route_problems(postgres, "tcp", None, "http://127.0.0.1:8000")[0]


def test_a_run_config_reports_them_with_its_other_problems():
    with pytest.raises(InvalidConfig) as caught:
        RunConfig(db_url="sqlite:///a.db", transport="unix", added_latency_ms=1, workers=0).checked()
    text = str(caught.value)
    assert "transport unix needs PostgreSQL" in text
    assert "SQLite has no connection" in text
    assert "workers must be from 1" in text


@pytest.mark.serial
def test_sqlite_is_reached_in_process_and_its_round_trip_is_a_call(sqlite_url):
    with database_route(sqlite_url, "inproc", None) as route:
        assert route.url.raw == sqlite_url
    described = route.transport
    assert described is not None
    assert (described.transport, described.chosen, described.added_latency_ms) == ("inproc", True, None)
    # A function call in this process: far below any socket's round trip.
    assert described.round_trip_us is not None and described.round_trip_us.direct is not None
    assert 0 < (described.round_trip_us.direct.median or 0) < 1000
    assert described.relay is None
    # As result.json has always had it: the added latency written even when there is none.
    assert list(described.to_json()) == ["transport", "chosen", "url", "added_latency_ms", "round_trip_us"]
    assert described.to_json()["added_latency_ms"] is None


@pytest.mark.serial
def test_postgres_over_its_socket_through_the_relay_is_recorded_with_the_relay_figures(postgres_url):
    database = parse_url(postgres_url).database
    with database_route(postgres_url, "unix", 1.0) as route:
        relayed = route.url
        assert relayed.host == "127.0.0.1" and relayed.port != 5432  # the relay's port
    described = route.transport
    assert described is not None
    assert (described.transport, described.chosen) == ("unix", True)
    assert described.url == f"postgresql://postgres@/{database}?host=/var/run/postgresql"
    assert described.relay is not None and (described.relay.target or "").endswith(".s.PGSQL.5432")
    document = described.to_json()
    through = document["round_trip_us"]["through_relay"]["median"]
    direct = document["round_trip_us"]["direct"]["median"]
    # Known answer: 1 ms each way adds at least 2 ms to a round trip.
    assert through - direct >= 2000
    stats = document["relay"]["stats"]
    assert stats["connections"] >= 1 and stats["held_chunks"] > 0 and stats["mean_late_us"] >= 0
    assert list(document) == ["transport", "chosen", "url", "added_latency_ms", "round_trip_us", "relay"]
    assert list(document["relay"]) == ["target", "listen", "stats"]
    assert route_words(described) == "unix + 1 ms each way (relay)"
    assert load_transport(described).endswith("through the latency relay adding 1 ms each way")


def test_an_app_machine_refuses_a_unix_socket_to_a_database_elsewhere(tmp_path):
    # 192.0.2.1 (TEST-NET-1) is no address of this machine; nothing is sent to find it out.
    elsewhere = parse_url("postgresql://postgres@192.0.2.1:5432/x")
    here = parse_url("postgresql://postgres@127.0.0.1:5432/x")
    assert is_this_machine("127.0.0.1") and is_this_machine("localhost")
    assert is_this_machine("192.0.2.1") is False
    assert is_this_machine("no-such-host.invalid") is None
    assert remote_route_problems(elsewhere, "unix") == [
        "--transport unix reaches a database only from its own machine, and 192.0.2.1 is not an "
        "address of this one: use --transport tcp, or run the app agent on the database's machine"
    ]
    assert remote_route_problems(elsewhere, "tcp") == remote_route_problems(elsewhere, None) == []
    assert remote_route_problems(here, "unix") == []
    missing = parse_url(f"postgresql://postgres@/x?host={tmp_path}")
    assert remote_route_problems(missing, None) == [
        f"the database's Unix socket {tmp_path}/.s.PGSQL.5432 is not on this machine: give --db an "
        "address this machine reaches the database at over TCP"
    ]
    assert remote_route_problems(parse_url(f"sqlite:///{tmp_path}/a.db"), None) == []


def test_an_app_agent_holds_the_route_and_its_relay_until_it_closes_it(postgres_url):
    # The actor's own methods, here without Dask: the route the coordinator sends by reference.
    agent = AppAgent()
    start = functools.partial(database_route, postgres_url, None, 0.0)
    route = agent.open_route(start)
    relay = RelayTarget.parse(route.transport.relay.listen)
    with socket.create_connection((relay.host, relay.port), timeout=5):
        pass  # the relay listens while the route is open
    ended = agent.close_route()
    assert ended is route and ended.transport.relay.stats.connections >= 1
    with pytest.raises(OSError):
        socket.create_connection((relay.host, relay.port), timeout=5).close()
    assert agent.close_route() is None
