"""The service over HTTP (`HttpTarget`), on a minimal HTTP/1.1 client for the executors' hot path.

One `asyncio.Protocol` per keep-alive connection, one request in flight per connection (no
pipelining), requests rendered to bytes before they are sent, and only as much response parsing as
the generator needs: the status line, Content-Length (or chunked transfer coding, or read-until-
close), Connection: close, and the body skipped unless asked for. The pool opens connections
lazily up to its limit, which is also the in-flight limit: when every connection is busy, `send`
says so at once and the caller counts the request as dropped instead of queueing it, so an open-
model schedule never turns into a closed loop.

Results come back through a plain callback, `callback(token, result, body)`, where `result` is the
HTTP status (an int) or a failure cause (a str: `TIMEOUT`, `CONNECT`, `PROTOCOL`). A callback and
a token instead of a future per request keeps the per-request cost to a few attribute writes; the
async `request` method is there for everything that is not the hot path (health checks, tests).
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from ...outcomes import CONNECT, PROTOCOL, TIMEOUT
from . import ResultCallback

if TYPE_CHECKING:
    from ...workloads.base import Workload
    from ..mix import Request

# A response head larger than this is not something our service sends: treat it as a protocol error
# rather than buffering without bound.
MAX_HEAD_BYTES = 64 * 1024

_monotonic = time.monotonic

KEEP_HEAD = 2
"""`send(..., keep_body=KEEP_HEAD)`: the body given to the callback starts with the response's
head (status line and headers, up to the blank line), for a caller that reads a header (the
user's app acknowledges a write by its redirect's Location)."""


class Response(NamedTuple):
    """The outcome of one request made with `ConnectionPool.request`."""

    status: int
    """The HTTP status, or 0 when the request failed."""
    cause: str | None
    """None for a response, else `TIMEOUT`, `CONNECT`, `PROTOCOL` or "dropped" (every connection busy)."""
    body: bytes | None


class RequestRenderer:
    """Renders requests of a workload's mix into complete HTTP/1.1 requests for one target.

    Each operation's `render(args)` gives the path (with its query string) and the JSON body or
    None; the method and the Host header are encoded once here, so a request costs the operation's
    own rendering and one bytes %-format.
    """

    def __init__(self, host: str, workload: Workload):
        self.host = host.encode("ascii")
        self._renders = [operation.render for operation in workload.operations]
        self._methods = [operation.method.encode("ascii") for operation in workload.operations]

    def __call__(self, request: Request) -> bytes:
        """The request bytes for (operation index, args)."""
        index, args = request
        path, body = self._renders[index](args)
        if body is None:
            return b"%b %b HTTP/1.1\r\nHost: %b\r\n\r\n" % (self._methods[index], path.encode(), self.host)
        return (
            b"%b %b HTTP/1.1\r\nHost: %b\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
            % (
                self._methods[index],
                path.encode(),
                self.host,
                len(body),
                body,
            )
        )


def render_request(request: Request, host: str, workload: Workload) -> bytes:
    """Render one request of the mix, (operation index, args), as HTTP/1.1 bytes for `host`
    (the Host header, e.g. "127.0.0.1:8000"). For many requests, build one `RequestRenderer`."""
    return RequestRenderer(host, workload)(request)


def render_get(path: str, host: str) -> bytes:
    """Render a plain GET for `path` (e.g. "/healthz"), to send with `ConnectionPool.send`."""
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode("ascii")


def _header(head: bytes, name: bytes) -> bytes | None:
    """The stripped value of header `name` (lower case, with the leading CRLF and trailing colon)."""
    start = head.find(name)
    if start < 0:
        return None
    start += len(name)
    end = head.find(b"\r\n", start)
    return head[start:end].strip() if end >= 0 else head[start:].strip()


class _Connection(asyncio.Protocol):
    """One keep-alive connection: idle in the pool, or carrying exactly one request."""

    __slots__ = (
        "body_parts",
        "buffer",
        "callback",
        "chunk_trailer",
        "chunked",
        "close_after",
        "deadline",
        "head_done",
        "keep_body",
        "opener",
        "pending",
        "pool",
        "remaining",
        "status",
        "token",
        "transport",
    )

    def __init__(self, pool: ConnectionPool):
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.opener: asyncio.Task[Any] | None = None
        self.pending: bytes | None = None  # the first request, written once connected
        self.callback: ResultCallback | None = None  # None means idle
        self.token: Any = None
        self.keep_body = False
        self.deadline = 0.0
        self._reset()

    def _reset(self) -> None:
        self.buffer = b""
        self.head_done = False
        self.status = 0
        self.remaining = 0  # body bytes still expected; -1 reads until the server closes
        self.chunked = False
        self.chunk_trailer = False
        self.close_after = False
        self.body_parts: list[bytes] = []

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # Small requests must leave at once; Nagle would hold them back waiting for an ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.pending is not None:
            data, self.pending = self.pending, None
            transport.write(data)  # type: ignore[attr-defined]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.pool._forget(self)
        if self.callback is None:
            return
        if self.head_done and self.remaining == -1:
            self._finish()  # the body ran until the server closed, as HTTP/1.0 allows
        else:
            self._fail(CONNECT)

    def data_received(self, data: bytes) -> None:
        if self.callback is None:
            # Bytes nobody asked for: the connection is out of step with the server.
            self._discard()
            return
        if self.head_done:
            self._body(data)
            return
        if self.buffer:
            data = self.buffer + data
            self.buffer = b""
        end = data.find(b"\r\n\r\n")
        if end < 0:
            if len(data) > MAX_HEAD_BYTES:
                self._fail(PROTOCOL)
            else:
                self.buffer = data
            return
        if data[:7] != b"HTTP/1.":
            self._fail(PROTOCOL)
            return
        try:
            status = int(data[9:12])
        except ValueError:
            self._fail(PROTOCOL)
            return
        if status < 200 and status != 101:
            # An interim response (100 Continue, 103 Early Hints): the real one follows.
            rest = data[end + 4 :]
            if rest:
                self.data_received(rest)
            return
        head = data[:end].lower()
        connection = _header(head, b"\r\nconnection:")
        if data[7] == 0x30:  # "HTTP/1.0": close unless the server offers keep-alive
            self.close_after = connection is None or b"keep-alive" not in connection
        else:
            self.close_after = connection is not None and b"close" in connection
        self.status = status
        self.head_done = True
        if self.keep_body == KEEP_HEAD:
            self.body_parts.append(data[: end + 4])
        length = _header(head, b"\r\ncontent-length:")
        if status == 204 or status == 304:
            self.remaining = 0
        elif length is not None:
            try:
                self.remaining = int(length)
            except ValueError:
                self.remaining = -2
            if self.remaining < 0:
                self._fail(PROTOCOL)
                return
            if len(data) - end - 4 == self.remaining:
                # The common case: the whole response in one read.
                if self.keep_body:
                    self.body_parts.append(data[end + 4 :])
                self._finish()
                return
        else:
            encoding = _header(head, b"\r\ntransfer-encoding:")
            if encoding is not None and b"chunked" in encoding:
                self.chunked = True
            else:
                self.remaining = -1
                self.close_after = True
        self._body(data[end + 4 :])

    # response bodies

    def _body(self, data: bytes) -> None:
        if self.chunked:
            self._chunks(data)
            return
        if self.remaining == -1:
            if self.keep_body and data:
                self.body_parts.append(data)
            return
        size = len(data)
        if size >= self.remaining:
            if size > self.remaining:
                # More than the response: we never pipeline, so the stream is out of step.
                data = data[: self.remaining]
                self.close_after = True
            if self.keep_body:
                self.body_parts.append(data)
            self.remaining = 0
            self._finish()
        else:
            if self.keep_body:
                self.body_parts.append(data)
            self.remaining -= size

    def _chunks(self, data: bytes) -> None:
        # Parse whole chunks only and keep the rest for the next read; the bodies we meet are small,
        # so re-joining a partial chunk costs less than a byte-wise state machine.
        buffer = self.buffer + data if self.buffer else data
        pos = 0
        while True:
            if self.chunk_trailer:
                if buffer.startswith(b"\r\n", pos):
                    pos += 2
                else:
                    end = buffer.find(b"\r\n\r\n", pos)
                    if end < 0:
                        self.buffer = buffer[pos:]
                        return
                    pos = end + 4
                if pos < len(buffer):
                    self.close_after = True
                self.buffer = b""
                self._finish()
                return
            line_end = buffer.find(b"\r\n", pos)
            if line_end < 0:
                self.buffer = buffer[pos:]
                return
            try:
                size = int(buffer[pos:line_end].split(b";", 1)[0], 16)
            except ValueError:
                self._fail(PROTOCOL)
                return
            if size == 0:
                self.chunk_trailer = True
                pos = line_end + 2
                continue
            chunk_end = line_end + 2 + size
            if len(buffer) < chunk_end + 2:
                self.buffer = buffer[pos:]
                return
            if self.keep_body:
                self.body_parts.append(buffer[line_end + 2 : chunk_end])
            pos = chunk_end + 2

    # outcomes

    def _finish(self) -> None:
        callback, token, status = self.callback, self.token, self.status
        self.callback = None
        self.token = None
        body = None
        if self.keep_body:
            body = b"".join(self.body_parts)
            self.body_parts = []
        if self.close_after:
            self._discard()
        else:
            # Only what a response can leave behind: the parse of the next one sets the rest.
            self.head_done = False
            if self.chunked:
                self.chunked = self.chunk_trailer = False
            # Back to the pool before the callback runs, so the callback can reuse this connection.
            self.pool._idle.append(self)
        callback(token, status, body)  # type: ignore[misc]

    def _fail(self, cause: str) -> None:
        callback, token = self.callback, self.token
        self.callback = None
        self.token = None
        self._discard()
        if callback is not None:
            callback(token, cause, None)

    def _discard(self) -> None:
        """Take this connection out of service; after a failure its state cannot be trusted."""
        self.pool._forget(self)
        if self.transport is not None:
            self.transport.abort()
        elif self.opener is not None:
            self.opener.cancel()


class ConnectionPool:
    """Up to `limit` keep-alive connections to one HTTP server, opened when first needed.

    `limit` is also the in-flight limit, since each connection carries one request at a time.
    `timeout` (seconds) bounds each request from `send` to the end of its response, connecting
    included; it is checked by a sweep every few milliseconds rather than a timer per request,
    so a timeout fires up to one sweep interval late.
    """

    def __init__(self, host: str, port: int, limit: int, timeout: float):
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.host = host
        self.port = port
        self.limit = limit
        self.timeout = timeout
        self.sweep_interval = min(0.05, max(0.002, timeout / 20))
        self._idle: list[_Connection] = []
        self._all: set[_Connection] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        self._closed = False
        self.opened = 0
        """Connections opened so far (a keep-alive check: it stays small when connections are reused)."""

    @property
    def in_flight(self) -> int:
        """Requests sent whose response has not arrived yet."""
        return len(self._all) - len(self._idle)

    @property
    def connections(self) -> int:
        """Connections open or being opened."""
        return len(self._all)

    def send(self, data: bytes, callback: ResultCallback, token: Any = None, keep_body: bool = False) -> bool:
        """Send one request (complete HTTP/1.1 bytes) and return True; or False at the in-flight limit.

        When it returns True, `callback(token, result, body)` runs exactly once later (never inside
        this call), unless the pool is closed first. Must be called on the event loop's thread.
        """
        idle = self._idle
        if idle:
            conn = idle.pop()
            transport = conn.transport
            if transport.is_closing():  # type: ignore[union-attr]
                # Closed by the server while idle; the loss callback has not run yet.
                self._forget(conn)
                return self.send(data, callback, token, keep_body)
        elif len(self._all) < self.limit:
            if self._closed:
                raise RuntimeError("the connection pool is closed")
            conn = _Connection(self)
            self._all.add(conn)
            transport = None
        else:
            return False
        conn.callback = callback
        conn.token = token
        conn.keep_body = keep_body
        conn.deadline = _monotonic() + self.timeout
        if transport is not None:
            transport.write(data)
        else:
            conn.pending = data
            self.opened += 1
            conn.opener = asyncio.get_running_loop().create_task(self._open(conn))
            if self._sweeper is None:
                self._sweep()
        return True

    async def request(self, data: bytes, keep_body: bool = True) -> Response:
        """Send one request and wait for its outcome (for checks and tests, not the hot path)."""
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        if not self.send(data, _settle, future, keep_body):
            return Response(0, "dropped", None)
        return await future

    def close(self) -> None:
        """Close every connection. Requests still in flight are abandoned: their callbacks never run."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for conn in list(self._all):
            conn.callback = None
            conn._discard()
        self._idle.clear()

    async def _open(self, conn: _Connection) -> None:
        try:
            await asyncio.get_running_loop().create_connection(lambda: conn, self.host, self.port)
        except OSError:
            conn.opener = None
            conn._fail(CONNECT)
        else:
            conn.opener = None

    def _forget(self, conn: _Connection) -> None:
        if conn in self._all:
            self._all.discard(conn)
            if conn.callback is None and conn in self._idle:
                self._idle.remove(conn)

    def _sweep(self) -> None:
        now = _monotonic()
        for conn in [c for c in self._all if c.callback is not None and c.deadline <= now]:
            conn._fail(TIMEOUT)
        if self._closed or not self._all:
            self._sweeper = None  # restarted by the next connection that opens
        else:
            self._sweeper = asyncio.get_running_loop().call_later(self.sweep_interval, self._sweep)


def _settle(future: asyncio.Future[Response], result: int | str, body: bytes | None) -> None:
    if future.done():  # the waiter was cancelled
        return
    if result.__class__ is int:
        future.set_result(Response(result, None, body))  # type: ignore[arg-type]
    else:
        future.set_result(Response(0, result, None))  # type: ignore[arg-type]


class HttpTarget:
    """The web service over HTTP/1.1 keep-alive connections, one request in flight on each."""

    def __init__(self, host: str, port: int, in_flight: int, timeout: float, workload: Workload):
        self._pool = ConnectionPool(host, port, in_flight, timeout)
        # A workload may render whole requests itself (the user's app: its cookies, forms, headers).
        self.render = workload.http_renderer(f"{host}:{port}") or RequestRenderer(f"{host}:{port}", workload)
        self.send = self._pool.send
        self.close = self._pool.close
        self.timeout = self._pool.timeout
        self.sweep_interval = self._pool.sweep_interval

    @property
    def in_flight(self) -> int:
        return self._pool.in_flight
