"""A TCP relay that adds a fixed delay to every chunk, each way: latency between service and database.

The kernel here has no netem qdisc, so added latency is made in the project: the service connects
to the relay on 127.0.0.1, the relay connects to the database (TCP or its Unix socket) and
forwards every chunk it reads, in each direction, `delay_ms` after it arrived. Order is kept; a
chunk that arrives while an earlier one is still held leaves after it, each at its own due time,
so pipelined traffic is delayed, not serialised. A round trip gains 2 x delay_ms; with a delay of
0 every chunk is forwarded at once, which measures the relay's own cost (benchmarks/relay.py).

The relay runs on its own event loop (`precise_loop`: select() and a fine timer slack), never
uvloop, whose clock counts whole milliseconds. It measures itself: every held chunk records how
late it actually left (`RelayStats.late_seconds`), so a report can state the latency really added.

`background.py` runs it in a thread or in its own process. `Relay.stop()` is clean: the listening
socket closes, then every relayed connection, both sides.
"""

from __future__ import annotations

import asyncio
import ctypes
import selectors
import sys
from collections import deque
from dataclasses import asdict, dataclass
from typing import cast

from ..errors import DbladderError, UsageError

LISTEN_HOST = "127.0.0.1"
PR_SET_TIMERSLACK = 29  # linux/prctl.h


class BadRelayTarget(UsageError):
    """A relay target that names neither host:port nor a Unix socket path."""


class RelayFailed(DbladderError):
    """The relay could not start, or stopped unexpectedly; the message says why."""


@dataclass(frozen=True)
class RelayTarget:
    """Where the relay connects: a TCP host and port, or a Unix socket path."""

    host: str | None = None
    port: int | None = None
    unix_path: str | None = None

    @classmethod
    def parse(cls, text: str) -> RelayTarget:
        """`host:port`, or a path (anything containing '/') for a Unix socket."""
        if "/" in text:
            return cls(unix_path=text)
        host, sep, port = text.rpartition(":")
        if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise BadRelayTarget(f"relay target {text!r} is neither host:port nor a Unix socket path")
        return cls(host=host.strip("[]"), port=int(port))

    def __str__(self) -> str:
        return self.unix_path if self.unix_path else f"{self.host}:{self.port}"


@dataclass
class RelayStats:
    """What the relay forwarded, and how precisely it held each chunk."""

    connections: int = 0
    chunks_up: int = 0  # client -> server
    chunks_down: int = 0  # server -> client
    bytes_up: int = 0
    bytes_down: int = 0
    held_chunks: int = 0  # chunks that waited for their due time (all of them when delay > 0)
    late_seconds: float = 0.0  # summed over held chunks: how long after its due time each left
    most_late_seconds: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @property
    def mean_late_seconds(self) -> float:
        return self.late_seconds / self.held_chunks if self.held_chunks else 0.0


class _End(asyncio.Protocol):
    """One socket of a relayed connection. What it reads goes out through its peer, delayed."""

    def __init__(self, relay: Relay, upstream: bool):
        self._relay = relay
        self._upstream = upstream  # this end is the server's socket
        self._loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.peer: _End | None = None
        self._held: deque[tuple[float, bytes]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._close_after_held = False
        self._closed = False

    # -- reading ------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self._relay._ends.add(self)
        if not self._upstream:
            # Read nothing from the client until the server's side is connected.
            self.transport.pause_reading()
            self._relay._connect_upstream(self)

    def data_received(self, data: bytes) -> None:
        stats = self._relay.stats
        if self._upstream:
            stats.chunks_down += 1
            stats.bytes_down += len(data)
        else:
            stats.chunks_up += 1
            stats.bytes_up += len(data)
        if self.peer is not None:
            self.peer.send(data)

    def eof_received(self) -> bool:
        # One side has finished: deliver what is held, then close both (database protocols do
        # not half-close; a client that quits is done).
        if self.peer is not None:
            self.peer.close_after_held()
        self.close_after_held()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._relay._ends.discard(self)
        if self._timer is not None:
            self._timer.cancel()
        if self.peer is not None:
            self.peer.close_after_held()

    # Back-pressure: when this socket's send buffer is full, stop reading from the peer's socket.
    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()

    # -- writing ------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Write `data` to this socket `delay` seconds from now, after anything held before it."""
        if self._closed or self.transport is None:
            return
        delay = self._relay.delay
        if delay <= 0 and not self._held:
            self.transport.write(data)
            return
        self._held.append((self._loop.time() + delay, data))
        if self._timer is None:
            self._timer = self._loop.call_at(self._held[0][0], self._release)

    def _release(self) -> None:
        self._timer = None
        if self.transport is None or self._closed:
            return
        now = self._loop.time()
        stats = self._relay.stats
        while self._held and self._held[0][0] <= now:
            due, data = self._held.popleft()
            late = now - due
            stats.held_chunks += 1
            stats.late_seconds += late
            stats.most_late_seconds = max(stats.most_late_seconds, late)
            self.transport.write(data)
        if self._held:
            self._timer = self._loop.call_at(self._held[0][0], self._release)
        elif self._close_after_held:
            self.transport.close()

    def close_after_held(self) -> None:
        self._close_after_held = True
        if self.transport is not None and not self._held:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class Relay:
    """An asyncio relay on 127.0.0.1 (port 0: any free one) to `target`, adding `delay_ms` each way."""

    def __init__(self, target: RelayTarget, delay_ms: float, host: str = LISTEN_HOST, port: int = 0):
        if delay_ms < 0:
            raise UsageError(f"the added latency must be 0 or more milliseconds, not {delay_ms}")
        self.target = target
        self.delay = delay_ms / 1000
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._ends: set[_End] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.stats = RelayStats()

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) the relay listens on; valid after start()."""
        if self._server is None:
            raise RelayFailed("the relay is not listening")
        host, port = self._server.sockets[0].getsockname()[:2]
        return host, port

    async def start(self) -> tuple[str, int]:
        """Listen; (host, port)."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _End(self, upstream=False), self._host, self._port, reuse_address=True
        )
        return self.address

    def _connect_upstream(self, client: _End) -> None:
        task = asyncio.get_running_loop().create_task(self._open_upstream(client))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _open_upstream(self, client: _End) -> None:
        loop = asyncio.get_running_loop()
        target = self.target
        try:
            if target.unix_path:
                _, server = await loop.create_unix_connection(
                    lambda: _End(self, upstream=True), target.unix_path
                )
            else:
                _, server = await loop.create_connection(
                    lambda: _End(self, upstream=True), target.host or LISTEN_HOST, target.port or 0
                )
        except OSError:
            # The database refused: the client sees its connection closed, as it would directly.
            client.abort()
            return
        client.peer, server.peer = server, client
        self.stats.connections += 1
        if client.transport is not None and not client.transport.is_closing():
            client.transport.resume_reading()
        else:
            server.close_after_held()

    async def stop(self) -> None:
        """Stop listening and close every relayed connection, both sides."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        for end in list(self._ends):
            end.abort()
        await asyncio.sleep(0)  # let the transports report connection_lost


# ---------------------------------------------------------------------------------------------


def precise_loop() -> asyncio.AbstractEventLoop:
    """An event loop whose timers fire as close to their due time as the kernel wakes the thread.

    Not uvloop (libuv's clock counts whole milliseconds) and not asyncio's default epoll
    selector: CPython hands epoll_wait its timeout in whole milliseconds, rounded up, so a timer
    can fire up to 1 ms late by construction. select() takes microseconds; a relay has few
    sockets, far below select's limit of 1,024 descriptors.
    """
    _fine_timer_slack()
    return asyncio.SelectorEventLoop(selectors.SelectSelector())


def _fine_timer_slack() -> None:
    """Ask Linux to wake this thread on time rather than up to 50 us late (its default timer slack).

    Measured here (300 calls, a quiet moment): select() asked to wait 2 ms woke a median 101 us
    late with the default slack, 40 us with a slack of 1 ns. Elsewhere, or if refused, timers are
    only less precise.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
