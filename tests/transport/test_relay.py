"""The latency relay: a known answer against a real PostgreSQL, bytes kept, both sides closed."""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import statistics
import time

import pytest

from dbladder.engines import EngineOptions, opened
from dbladder.transport import RelayTarget, background_relay, relay_process, relay_target, through_relay
from dbladder.transport.relay import BadRelayTarget, Relay
from dbladder.urls import parse_url

ROUND_TRIPS = 50


async def round_trip_seconds(url: str, count: int = ROUND_TRIPS) -> list[float]:
    """The time of each of `count` `SELECT 1` round trips on one connection."""
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        for _ in range(5):
            await session.fetch_one("SELECT 1")
        times = []
        for _ in range(count):
            started = time.perf_counter()
            await session.fetch_one("SELECT 1")
            times.append(time.perf_counter() - started)
    return times


@pytest.mark.serial
def test_two_ms_added_makes_each_round_trip_at_least_four_ms_longer(postgres_url):
    # Known answer: the relay holds each chunk 2 ms each way, so a round trip (one chunk up, one
    # down) takes at least 4 ms more than direct. Medians over 50 round trips; the upper bound
    # (a relay that held each chunk twice would reach it) allows for wake-up delays on a shared
    # 2-core machine: under a load average of 13 the added time measured 4.6-6.1 ms.
    url = parse_url(postgres_url)
    with relay_process(relay_target(url), delay_ms=2) as relay:
        direct = statistics.median(asyncio.run(round_trip_seconds(postgres_url)))
        relayed = statistics.median(asyncio.run(round_trip_seconds(through_relay(url, relay.address).raw)))
    added = relayed - direct
    assert 0.004 <= added < 0.004 + 0.004, f"added {added * 1000:.2f} ms per round trip"
    assert relay.stats.connections == 1
    # Every chunk was held (the last, the client's goodbye, may still be held when the relay stops).
    assert relay.stats.held_chunks >= relay.stats.chunks_up + relay.stats.chunks_down - 1
    assert relay.stats.chunks_up >= ROUND_TRIPS


@pytest.mark.serial
def test_no_delay_forwards_at_once_and_counts_chunks(postgres_url):
    url = parse_url(postgres_url)
    with background_relay(relay_target(url), delay_ms=0) as running:
        times = asyncio.run(round_trip_seconds(through_relay(url, running.relay.address).raw, 20))
    assert statistics.median(times) < 0.005  # no timer in the path (a held chunk would show below)
    stats = running.relay.stats
    assert stats.held_chunks == 0
    assert stats.chunks_up >= 25 and stats.chunks_down >= 25  # startup, 5 warm-up and 20 queries


class EchoServer:
    """A real echo server on TCP or a Unix socket that, on exit, waits for its connections to end."""

    def __init__(self, unix_path: str | None = None):
        self.unix_path = unix_path
        self.handlers: set[asyncio.Task] = set()
        self.target = RelayTarget()

    async def _echo(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.handlers.add(asyncio.current_task())
        try:
            while data := await reader.read(1 << 16):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> EchoServer:
        if self.unix_path:
            self.server = await asyncio.start_unix_server(self._echo, self.unix_path)
            self.target = RelayTarget(unix_path=self.unix_path)
        else:
            self.server = await asyncio.start_server(self._echo, "127.0.0.1", 0)
            self.target = RelayTarget(host="127.0.0.1", port=self.server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.server.close()
        await self.server.wait_closed()
        if self.handlers:
            await asyncio.wait(self.handlers, timeout=5)


async def _send_and_read_back(address: tuple[str, int], payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(*address)

    async def send() -> None:
        for start in range(0, len(payload), 1 << 20):
            writer.write(payload[start : start + (1 << 20)])
            await writer.drain()

    sender = asyncio.create_task(send())
    received = await reader.readexactly(len(payload))
    await sender
    writer.close()
    await writer.wait_closed()
    return received


@pytest.mark.parametrize("delay_ms", [0, 1])
@pytest.mark.parametrize("unix", [False, True])
def test_large_transfers_arrive_byte_for_byte_both_ways(tmp_path, delay_ms, unix):
    payload = os.urandom(8 << 20)

    async def scenario() -> bytes:
        async with EchoServer(str(tmp_path / "echo.sock") if unix else None) as echo:
            with background_relay(echo.target, delay_ms) as running:
                return await _send_and_read_back(running.relay.address, payload)

    received = run_quickly(scenario())
    assert hashlib.sha256(received).hexdigest() == hashlib.sha256(payload).hexdigest()


def run_quickly(coroutine):
    async def bounded():
        async with asyncio.timeout(30):
            return await coroutine

    return asyncio.run(bounded())


@pytest.mark.parametrize("closer", ["client", "server"])
def test_when_one_side_closes_the_relay_closes_the_other(closer):
    async def scenario() -> bytes:
        server_side: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server_side.put((reader, writer))

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        target = RelayTarget(host="127.0.0.1", port=server.sockets[0].getsockname()[1])
        try:
            with background_relay(target, delay_ms=1) as running:
                client_reader, client_writer = await asyncio.open_connection(*running.relay.address)
                server_reader, server_writer = await server_side.get()
                client_writer.write(b"last words")
                await client_writer.drain()
                if closer == "client":
                    client_writer.close()
                    # The server gets what was sent, then end of file: the relay closed its side.
                    received = await server_reader.read()
                    server_writer.close()
                else:
                    assert await server_reader.readexactly(10) == b"last words"
                    server_writer.write(b"goodbye")
                    await server_writer.drain()
                    server_writer.close()
                    received = await client_reader.read()
                    client_writer.close()
                return received
        finally:
            server.close()
            await server.wait_closed()

    received = run_quickly(scenario())
    assert received == (b"last words" if closer == "client" else b"goodbye")


async def rest_until_closed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    """What the client reads until the relay closes its connection; a reset counts as nothing read."""
    try:
        return await reader.read()
    except ConnectionResetError:
        return b""
    finally:
        writer.close()


def test_a_refused_target_closes_the_client():
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]

    async def scenario() -> bytes:
        with background_relay(RelayTarget(host="127.0.0.1", port=free_port), 0) as running:
            return await rest_until_closed(*await asyncio.open_connection(*running.relay.address))

    assert run_quickly(scenario()) == b""


def test_stopping_closes_relayed_connections():
    async def scenario() -> bytes:
        async with EchoServer() as echo:
            with background_relay(echo.target, 0) as running:
                reader, writer = await asyncio.open_connection(*running.relay.address)
                writer.write(b"ping")
                assert await reader.readexactly(4) == b"ping"
            # The block ended: the relay stopped and closed the connection.
            return await rest_until_closed(reader, writer)

    assert run_quickly(scenario()) == b""


def test_targets_parse_and_bad_ones_are_refused():
    assert RelayTarget.parse("127.0.0.1:5432") == RelayTarget(host="127.0.0.1", port=5432)
    assert RelayTarget.parse("/run/mysqld/mysqld.sock") == RelayTarget(unix_path="/run/mysqld/mysqld.sock")
    assert str(RelayTarget.parse("[::1]:3306")) == "::1:3306"
    for bad in ("localhost", "host:port", "host:70000", ":5432"):
        with pytest.raises(BadRelayTarget):
            RelayTarget.parse(bad)
    with pytest.raises(Exception, match="0 or more milliseconds"):
        Relay(RelayTarget(host="127.0.0.1", port=1), -1)
