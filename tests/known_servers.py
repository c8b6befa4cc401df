"""Small HTTP servers whose right figures can be worked out on paper, to test dbladder's figures.

Each runs in a process of its own (uvloop, one thread), answers every request with a tiny JSON
body over HTTP/1.1 keep-alive, and behaves by a rule simple enough to give the answer in advance:

  fifo     one request at a time, each taking exactly `service_ms`: a request that arrives at t
           is answered at max(t, previous answer) + service. Its capacity is exactly 1000 /
           service_ms requests/s; below it an evenly spaced load waits `service_ms`, above it
           the queue grows by (rate - capacity) every second, so latency grows without bound.
           With `cold_ms`, the first request for each path costs that much more (a page's first
           hit: its templates compiled, its caches filled); every later one is warm.
  stall    answers at once, except that every `period_s` it stops for `stall_s`: a request that
           arrives in a stall is answered when the stall ends. With evenly spread arrivals a
           share f = stall / period waits, uniformly from 0 to the stall, so the latency
           quantile q (q > 1 - f) is stall * (1 - (1 - q) / f). Its stalls begin when it comes
           up, or at `phase_at` (a time.monotonic() value) and every `period_s` before and after
           it: a test sets them where it wants them in its levels, not where the levels begin.
  cpu      one request at a time, each spinning its one thread for `service_ms` of that thread's
           own CPU time: its capacity is 1000 / service_ms requests per second of a whole core,
           and its process wants a whole core whenever a backlog waits, however much it gets.
  block    one request at a time, each holding its one thread in a blocking sleep of `service_ms`
           (as a call that blocks the event loop does: SQLite's busy handler, a synchronous read):
           its capacity is 1000 / service_ms requests per second, and its loop is busy whenever a
           backlog waits, on however busy a machine, while it uses next to no CPU.
  burn     the stall server, but its stalls are its CPU: every `period_s` its one thread spins for
           `stall_s`, so its process uses a whole core in those seconds and next to none in the
           others (a stall with a known co-event; the spin runs on the clock, not the loop's timers).
  errors   answers at once, every `every`-th request (counted over the whole server) with 503:
           exactly 1 / every of the requests fail.
  slow     answers each request `service_ms` after it arrives, however many are waiting (no queue),
           and every `every`-th (counted over the whole server) `slow_ms` after it: of n requests
           in a row, n / every take slow_ms, so its latencies' q-quantile is service_ms for q up
           to 1 - 1 / every and slow_ms above (every 20th: the p95 is service_ms, the p96 slow_ms).
  once     answers at once, but for one stall: once it has seen `every` requests, every request
           that arrives in the next `stall_s` is answered when that stall ends, and never again
           (a one-off moment in the first level of a run, wherever the run's set-up put its start).

    with known_server("fifo", service_ms=2.0) as server:   # capacity 500 requests/s
        ... server.url, server.port ...

The rule runs on the event loop's clock (call_at), so the answers do not depend on how busy the
machine is, only their lateness (about a millisecond, the loop's timer resolution) does.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import multiprocessing
import signal
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

BODY = b'{"ok":true}'
OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%b" % (len(BODY), BODY)
UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n" + BODY
)


@dataclass(frozen=True)
class Rule:
    kind: str  # "fifo", "cpu", "block", "stall", "burn", "errors", "slow" or "once"
    service_ms: float = 0.0
    slow_ms: float = 0.0
    period_s: float = 1.0
    stall_s: float = 0.0
    every: int = 0
    phase_at: float | None = None  # stall, burn: a stall begins at this time.monotonic()
    cold_ms: float = 0.0  # fifo: the extra cost of the first request for each path


class _State:
    """What the rule needs to remember across connections."""

    def __init__(self, rule: Rule, loop: asyncio.AbstractEventLoop):
        self.rule = rule
        self.loop = loop
        self.busy_until = 0.0  # fifo: when the last request in the queue is answered
        # stall: stalls start at origin + k * period, for every whole k. uvloop's loop.time() is
        # time.monotonic() (CLOCK_MONOTONIC) to the millisecond, so a test's phase_at is its time.
        self.origin = loop.time() if rule.phase_at is None else rule.phase_at
        self.count = 0  # errors, slow, once: requests so far
        self.seen: set[bytes] = set()  # fifo with cold_ms: the paths asked for so far
        self.stall_ends: float | None = None  # once: when its one stall ends, once it has begun

    def answer_at(self, now: float, path: bytes = b"") -> tuple[float, bytes]:
        rule = self.rule
        if rule.kind == "fifo":
            cost = rule.service_ms
            if rule.cold_ms and path not in self.seen:
                self.seen.add(path)
                cost += rule.cold_ms
            done = max(now, self.busy_until) + cost / 1000
            self.busy_until = done
            return done, OK
        if rule.kind == "burn":
            return now, OK  # its stalls hold the loop itself (_spin)
        if rule.kind == "cpu":
            until = time.thread_time() + rule.service_ms / 1000
            while time.thread_time() < until:
                pass
            return now, OK
        if rule.kind == "block":
            time.sleep(rule.service_ms / 1000)
            return now, OK
        if rule.kind == "stall":
            into = (now - self.origin) % rule.period_s
            if into < rule.stall_s:
                return now + (rule.stall_s - into), OK
            return now, OK
        self.count += 1
        if rule.kind == "slow":
            wait = rule.slow_ms if self.count % rule.every == 0 else rule.service_ms
            return now + wait / 1000, OK
        if rule.kind == "once":
            if self.stall_ends is None and self.count >= rule.every:
                self.stall_ends = now + rule.stall_s
            return max(now, self.stall_ends or now), OK
        return now, UNAVAILABLE if self.count % rule.every == 0 else OK


class _Connection(asyncio.Protocol):
    def __init__(self, state: _State):
        self.state = state
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].lower()
            length = 0
            marker = head.find(b"\r\ncontent-length:")
            if marker >= 0:
                line_end = head.find(b"\r\n", marker + 2)
                length = int(head[marker + 17 : line_end if line_end >= 0 else None].strip())
            if len(self.buffer) < end + 4 + length:
                return
            path = self.buffer[: self.buffer.find(b"\r\n")].split(b" ")[1] if self.state.rule.cold_ms else b""
            self.buffer = self.buffer[end + 4 + length :]
            at, response = self.state.answer_at(self.state.loop.time(), path)
            if at <= self.state.loop.time():
                self._send(response)
            else:
                self.state.loop.call_at(at, self._send, response)

    def _send(self, response: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(response)


def _spin(loop: asyncio.AbstractEventLoop, began: float, rule: Rule) -> None:
    """The burn server's stall: the loop's one thread busy until `began + stall_s`, then the next."""
    until = time.monotonic() + rule.stall_s
    while time.monotonic() < until:
        pass
    loop.call_at(began + rule.period_s, _spin, loop, began + rule.period_s, rule)


def _serve(rule: Rule, sock: socket.socket, ready: Any) -> None:
    import uvloop

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        state = _State(rule, loop)
        server = await loop.create_server(lambda: _Connection(state), sock=sock, backlog=4096)
        if rule.kind == "burn":
            # The first stall at or after now, on the rule's phase.
            first = state.origin + math.ceil((loop.time() - state.origin) / rule.period_s) * rule.period_s
            first = first if first > loop.time() else first + rule.period_s
            loop.call_at(first, _spin, loop, first, rule)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        ready.send(True)
        async with server:
            await stop.wait()

    uvloop.run(main())


@dataclass
class KnownServer:
    rule: Rule
    port: int
    process: Any

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def capacity(self) -> float:
        """Requests per second a fifo server can answer."""
        return 1000.0 / self.rule.service_ms


@contextlib.contextmanager
def known_server(kind: str, **rule: Any) -> Iterator[KnownServer]:
    """A server of the given kind on a free loopback port for the block; stopped (by PID) after it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    port = sock.getsockname()[1]
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_serve, args=(Rule(kind, **rule), sock, send), daemon=True)
    process.start()
    sock.close()
    try:
        if not receive.poll(30):
            raise RuntimeError(f"the {kind} server did not start")
        receive.recv()
        yield KnownServer(Rule(kind, **rule), port, process)
    finally:
        if process.is_alive():
            process.terminate()
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()


def wait_until_listening(port: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.02)
    raise RuntimeError(f"nothing listens on port {port}")
