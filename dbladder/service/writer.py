"""One SQLite writer for every worker process (`--sqlite-writers 1`, "Postgres vs SQLite under load").

SQLite lets one connection write at a time; when every worker writes through its own pool, the
losers sleep on the file lock (the busy handler) and their whole event loop sleeps with them.
With one writer, every write of every worker goes through exactly one connection, owned by one
writer process; workers forward each write operation (its index in the workload and its
arguments) to it over a Unix socket, so writes queue inside the service instead of sleeping on
the lock.

The protocol is a 4-byte big-endian length and a msgpack body, both ways. Requests carry an id
(replies can come in any order) and a deadline on the shared monotonic clock: a write that has
not started by then is refused with TIMED_OUT, the same promise as the pool timeout, so a 503 never
hides a write that was made after all.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import signal
import struct
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import msgspec

from ..engines import create_engine
from ..engines.base import Engine
from ..engines.pool import RequestTiming, request_timing
from ..errors import Conflict, DatabaseTimeout, DbladderError, PoolTimeout, WriterUnavailable
from ..workloads.base import Answer, Workload
from ..workloads.registry import load_workload
from . import queries, stats
from .config import ServiceConfig

log = logging.getLogger(__name__)

FRAME = struct.Struct(">I")
MAX_FRAME_BYTES = 64 * 1024  # a write's arguments are a few hundred bytes: far below this
# How long past its deadline a worker waits for a reply before it gives the writer up: the write
# may have started just before the deadline and still needs its commit.
REPLY_GRACE_SECONDS = 10.0

OK, CONFLICT, TIMED_OUT, FAILED = range(4)
QUERIES_INTERVAL_SECONDS = 0.2  # as the workers publish theirs (app.FLUSH_INTERVAL_SECONDS)


class WriteRequest(msgspec.Struct, array_like=True, frozen=True):
    request_id: int
    deadline: float  # time.monotonic() by which the write must have started
    operation: int  # the index of the write operation in the workload
    args: list[Any]
    sent_at: float = 0.0  # time.monotonic() when the worker sent it: where its queueing starts


class WriteReply(msgspec.Struct, array_like=True, frozen=True):
    request_id: int
    outcome: int
    status: int = 0
    body: Any = None
    code: str = ""  # a Conflict's code and details
    details: dict[str, Any] = {}
    message: str = ""


_encoder = msgspec.msgpack.Encoder()
_request_decoder = msgspec.msgpack.Decoder(WriteRequest)
_reply_decoder = msgspec.msgpack.Decoder(WriteReply)


def _frame(message: msgspec.Struct) -> bytes:
    body = _encoder.encode(message)
    return FRAME.pack(len(body)) + body


async def _read_frame(reader: asyncio.StreamReader) -> bytes:
    (size,) = FRAME.unpack(await reader.readexactly(FRAME.size))
    if size > MAX_FRAME_BYTES:
        raise ConnectionError(f"a frame of {size} bytes is over the {MAX_FRAME_BYTES}-byte bound")
    return await reader.readexactly(size)


# ---------------------------------------------------------------------------------------------
# The writer process


class _Writer:
    def __init__(self, workload: Workload, context: Any, engine: Engine, slot: stats.Slot):
        self._operations = workload.operations
        self._context = context
        self._engine = engine
        self._slot = slot
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve_connection(self, reader: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = _request_decoder.decode(await _read_frame(reader))
                task = asyncio.create_task(self._write(request, out))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except (asyncio.IncompleteReadError, ConnectionError, msgspec.DecodeError):
            pass  # the worker went away (or spoke nonsense): its pending writes still finish
        finally:
            out.close()

    async def _write(self, request: WriteRequest, out: asyncio.StreamWriter) -> None:
        reply = await self._timed(request)
        self._slot.values["busy_waits"] = self._engine.counters().get("busy_waits", 0)
        self._slot.flush()
        if not out.is_closing():
            out.write(_frame(reply))

    async def _timed(self, request: WriteRequest) -> WriteReply:
        """The write's outcome, with its queueing and its own time added to the writer's counters.

        Queued: from the worker's send until the writer holds its one connection for it (the
        socket, the writer's event loop, then the connection's own wait, which the pool times
        through `request_timing`); busy: the rest, its statements and commit. time.monotonic()
        is one clock for every process of the machine, so the worker's send time can be used.
        """
        started = time.monotonic()
        timing = RequestTiming()
        request_timing.set(timing)  # this write's own task: its context is its own
        # A write refused at its deadline before it began counts too: it queued all that time.
        reply = await self._outcome(request, started)
        ended = time.monotonic()
        queued = (max(started - request.sent_at, 0.0) if request.sent_at else 0.0) + timing.pool_wait
        values = self._slot.values
        values["writer_writes"] += 1
        values["writer_queued_us"] += int(queued * 1_000_000)
        values["writer_busy_us"] += int(max(ended - started - timing.pool_wait, 0.0) * 1_000_000)
        return reply

    async def _outcome(self, request: WriteRequest, now: float) -> WriteReply:
        rid = request.request_id
        if now > request.deadline:
            return WriteReply(
                rid, TIMED_OUT, message="the write waited too long for the single SQLite writer"
            )
        if not 0 <= request.operation < len(self._operations):
            return WriteReply(rid, FAILED, message=f"no operation number {request.operation}")
        operation = self._operations[request.operation]
        try:
            answer = await operation.run(self._context, tuple(request.args))
        except Conflict as exc:
            return WriteReply(rid, CONFLICT, code=exc.code, details=exc.details, message=str(exc))
        except (PoolTimeout, DatabaseTimeout) as exc:
            return WriteReply(rid, TIMED_OUT, message=str(exc))
        except Exception as exc:
            log.exception("the SQLite writer failed in %s", operation.name)
            return WriteReply(rid, FAILED, message=f"{type(exc).__name__}: {exc}")
        if answer.status < 300:
            self._slot.add("writes")
        return WriteReply(rid, OK, status=answer.status, body=answer.body)

    async def drain(self, timeout: float) -> None:
        """Let the writes already received finish."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)


async def _serve(
    config: ServiceConfig, socket_path: Path, stats_path: Path, ready: Connection, restart: bool
) -> None:
    # Exactly one connection: a pool of one, whatever the service's pool size.
    engine = create_engine(config.db_url, dataclasses.replace(config.engine_options, pool_size=1))
    try:
        workload = load_workload(config.workload)
        await engine.open()
        context = await workload.open(engine)
    except DbladderError as exc:
        ready.send(f"the SQLite writer cannot open the database: {exc}")
        return
    slot = stats.Slot(stats_path, "writer")
    if restart:  # the keeper replaced a writer that died (keeper.py)
        slot.add("writer_restarts")
        slot.flush()
    writer = _Writer(workload, context, engine, slot)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    server = await asyncio.start_unix_server(writer.serve_connection, path=str(socket_path))
    publisher = queries.Publisher(stats_path)
    publishing = asyncio.create_task(_publish_queries(publisher, workload, context))
    ready.send("")
    try:
        await stop.wait()
    finally:
        server.close()
        await writer.drain(config.shutdown_timeout)
        publishing.cancel()
        publisher.publish(workload.query_counts(context))
        await workload.close(context)
        await engine.close()
        slot.close()


async def _publish_queries(publisher: queries.Publisher, workload: Workload, context: Any) -> None:
    """The writes' query counts, for a workload that counts them, on the workers' beat (`queries.py`)."""
    if workload.query_counts(context) is None:
        return
    while True:
        await asyncio.sleep(QUERIES_INTERVAL_SECONDS)
        publisher.publish(workload.query_counts(context))


def run_writer_process(
    config: ServiceConfig, socket_path: Path, stats_path: Path, ready: Connection, restart: bool = False
) -> None:
    """The writer process's body: serve writes on `socket_path` until SIGTERM.

    It sends one message on `ready`: "" once it accepts writes, or why it could not start.
    `restart`: it replaces a writer that died, which it counts in `writer_restarts`.
    SIGINT is ignored: on Ctrl-C the parent first lets the workers finish their requests, which
    may still need the writer, and then stops it with SIGTERM.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_serve(config, socket_path, stats_path, ready, restart))


# ---------------------------------------------------------------------------------------------
# The worker side


class WriterClient:
    """A worker's connection to the writer process; many requests in flight on one socket."""

    def __init__(self, socket_path: Path, timeout: float):
        self._path = str(socket_path)
        self._timeout = timeout
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[WriteReply]] = {}
        self._out: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._connecting = asyncio.Lock()

    async def _connection(self) -> asyncio.StreamWriter:
        if self._out is not None and not self._out.is_closing():
            return self._out
        async with self._connecting:
            if self._out is None or self._out.is_closing():
                try:
                    reader, self._out = await asyncio.open_unix_connection(self._path)
                except OSError as exc:
                    raise WriterUnavailable(
                        f"cannot reach the SQLite writer at {self._path}: {exc}"
                    ) from None
                self._reader_task = asyncio.create_task(self._read_replies(reader))
            return self._out

    async def _read_replies(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                reply = _reply_decoder.decode(await _read_frame(reader))
                future = self._pending.get(reply.request_id)
                if future is not None and not future.done():
                    future.set_result(reply)
        except (asyncio.IncompleteReadError, ConnectionError, msgspec.DecodeError):
            pass
        finally:
            if self._out is not None:
                self._out.close()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(WriterUnavailable("the SQLite writer closed the connection"))

    async def run(self, operation: int, args: Sequence[Any]) -> Answer:
        """What the workload's write operation number `operation` answers or raises, done by the writer."""
        out = await self._connection()
        request_id = next(self._ids)
        future: asyncio.Future[WriteReply] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            now = time.monotonic()
            out.write(_frame(WriteRequest(request_id, now + self._timeout, operation, list(args), now)))
            try:
                async with asyncio.timeout(self._timeout + REPLY_GRACE_SECONDS):
                    reply = await future
            except TimeoutError:
                raise WriterUnavailable(
                    f"the SQLite writer did not answer within {self._timeout + REPLY_GRACE_SECONDS:g} s"
                ) from None
        finally:
            del self._pending[request_id]
        if reply.outcome == OK:
            return Answer(reply.status, reply.body)
        if reply.outcome == CONFLICT:
            raise Conflict(reply.code, reply.message, **reply.details)
        if reply.outcome == TIMED_OUT:
            raise PoolTimeout(f"{reply.message} (waited more than {self._timeout:g} s)")
        # FAILED: an unexpected error in the writer, a bug; the app answers 500 as for its own.
        raise RuntimeError(f"the SQLite writer failed: {reply.message}")

    async def close(self) -> None:
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader_task
        if self._out is not None:
            self._out.close()
