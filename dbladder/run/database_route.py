"""How a round's load reaches the database: `--transport inproc|unix|tcp` and `--added-latency MS`.

    route = database_route(db_url, transport, added_latency_ms)   # before the service starts
    with route as found: ... found.url ...                         # the URL the load uses
    run.update(transport=found.transport)                          # relay figures added at exit

The data is seeded and checked over the URL as given; only the load (the service, or direct mode)
goes by the route. `--transport` asks the server where it listens and uses that form of the same
database (`dbladder.transport.transport_url`); `--added-latency MS` starts the latency relay in a
process of its own and sends the load through it, MS added to every chunk each way, so a round
trip gains 2 x MS. With 0 the relay adds nothing but its own cost, which is what a run with MS
should be compared against (docs/orm.md measured it at tens to hundreds of microseconds per round
trip on a busy machine).

Before the load, the route measures what one round trip costs over it (`SELECT 1` on one
connection, `transport.probe`, a few tens of milliseconds): over the transport alone and, with a
relay, through the relay, so the report can say what a round trip costs and what the relay itself
adds; a run without either flag measures its URL's own transport the same way. After the load it
records what the relay forwarded and how late its held chunks left.

With a cluster's app agent the route is made on the app machine (dbladder.cluster sends
`database_route` there by reference): the relay listens on that machine's loopback, in front of
the database's address as that machine reaches it, and the round trips are measured there.
`remote_route_problems`, run there before anything is seeded, says which routes cannot be made
from that machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..engines.dialect import dialect_of
from ..errors import DbladderError
from ..result.context import RelayForwarded, RelayRecord, RoundTrips, RoundTripSpread
from ..result.run import Transport
from ..transport import (
    TRANSPORTS,
    relay_process,
    relay_target,
    through_relay,
    transport_of,
    transport_url,
)
from ..transport.probe import round_trip_us
from ..urls import DatabaseURL, is_this_machine, parse_url

MAX_ADDED_LATENCY_MS = 1000.0
RELAY_PROBE_ROUND_TRIPS = 100  # through a relay adding MS each way: 100 x 2 MS at most


@dataclass
class Route:
    """The URL the load uses, parsed, and the result's `transport`: how it gets there (None: as
    given). The route's block replaces `transport` with the relay's figures added as it stops."""

    url: DatabaseURL
    transport: Transport | None = None


def route_problems(
    db_url: str | DatabaseURL,
    transport: str | None,
    added_latency_ms: float | None,
    service_url: str | None = None,
) -> list[str]:
    """Every problem with a transport and an added latency for this database, each saying what to use."""
    problems: list[str] = []
    if transport is None and added_latency_ms is None:
        return problems
    try:
        kind = (parse_url(db_url) if isinstance(db_url, str) else db_url).kind
    except DbladderError:
        return problems  # the URL's own problem is reported where the URL is checked
    if transport is not None:
        if transport not in TRANSPORTS:
            problems.append(f"transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
        elif kind.in_process and transport != "inproc":
            problems.append(
                f"SQLite runs inside the service's process: transport {transport} needs PostgreSQL or "
                "MariaDB (SQLite's only transport is inproc)"
            )
        elif not kind.in_process and transport == "inproc":
            problems.append(f"{kind.name} is a server the service connects to: choose transport unix or tcp")
    if added_latency_ms is not None:
        if not (
            isinstance(added_latency_ms, int | float)
            and math.isfinite(added_latency_ms)
            and 0 <= added_latency_ms <= MAX_ADDED_LATENCY_MS
        ):
            problems.append(
                f"added latency must be from 0 to {MAX_ADDED_LATENCY_MS:g} ms, not {added_latency_ms!r}"
            )
        elif kind.in_process:
            problems.append(
                "added latency goes between the service and a database server: SQLite has no connection "
                "to add it to"
            )
    if service_url is not None:
        problems.append(
            "transport and added latency are chosen by the service dbladder starts, not by one already "
            "running (--service)"
        )
    return problems


def remote_route_problems(db_url: DatabaseURL, transport: str | None) -> list[str]:
    """Why the service's route cannot be made from this machine (an app agent's, asked before the
    run): a Unix socket is a file of the database's own machine, so `--transport unix` needs the
    URL's host to be an address of this one, and a URL that is a socket needs it here."""
    if db_url.kind.in_process:
        return []  # SQLite's file: the app agent seeds it on its own machine
    endpoint = dialect_of(db_url).endpoint(db_url)
    if endpoint is None:
        return []
    if endpoint.unix_path:
        if os.path.exists(endpoint.unix_path):
            return []
        return [
            f"the database's Unix socket {endpoint.unix_path} is not on this machine: give --db an "
            "address this machine reaches the database at over TCP"
        ]
    if transport == "unix" and is_this_machine(endpoint.host) is False:
        return [
            f"--transport unix reaches a database only from its own machine, and {endpoint.host} is "
            "not an address of this one: use --transport tcp, or run the app agent on the database's machine"
        ]
    return []


@contextlib.contextmanager
def database_route(
    db_url: str | DatabaseURL,
    transport: str | None,
    added_latency_ms: float | None,
    place: Callable[[], None] | None = None,
    measured_on: str | None = None,
) -> Iterator[Route]:
    """The route for the block: the URL as given, another transport of it, or a relay in front of it,
    described (the result's `transport`; `measured_on`: the app agent whose machine makes it).

    Raises TransportUnavailable or TransportFailed (from `transport_url`), RelayFailed when the
    relay cannot start.
    """
    given = parse_url(db_url) if isinstance(db_url, str) else db_url
    url = asyncio.run(transport_url(given, transport)) if transport is not None else given
    direct = RoundTripSpread.from_json(asyncio.run(round_trip_us(url)))
    described = Transport(
        transport=transport_of(url),
        chosen=transport is not None,
        url=url.redacted,
        added_latency_ms=added_latency_ms,
        round_trip_us=RoundTrips(direct=direct),
        measured_on=measured_on,
    )
    if added_latency_ms is None:
        yield Route(url, described)
        return
    target = relay_target(url)
    with relay_process(target, added_latency_ms, place) as relay:
        relayed = through_relay(url, relay.address)
        record = RelayRecord(target=str(target), listen=f"{relay.address[0]}:{relay.address[1]}")
        through = RoundTripSpread.from_json(asyncio.run(round_trip_us(relayed, RELAY_PROBE_ROUND_TRIPS)))
        described = described.updated(
            {"relay": record, "round_trip_us": RoundTrips(direct=direct, through_relay=through)}
        )
        route = Route(relayed, described)
        yield route
    stats = relay.stats
    forwarded = stats.to_dict() | {"mean_late_us": round(stats.mean_late_seconds * 1e6, 1)}
    route.transport = described.updated(
        {"relay": record.updated({"stats": RelayForwarded.from_json(forwarded)})}
    )


def route_words(transport: Transport | None) -> str:
    """A route in a few words: "tcp", "unix", "tcp + 2 ms each way (relay)"."""
    if transport is None:
        return ""
    words = str(transport.transport or "?")
    if transport.added_latency_ms is not None:
        words += f" + {transport.added_latency_ms:g} ms each way (relay)"
    return words


def load_transport(transport: Transport) -> str:
    """The engine's transport as the load used it, for the result's `engine.transport`: "tcp
    postgresql://127.0.0.1:5432/shop, through the latency relay adding 2 ms each way"."""
    words = f"{transport.transport} {transport.url}"
    if transport.added_latency_ms is not None:
        words += f", through the latency relay adding {transport.added_latency_ms:g} ms each way"
    return words
