"""The diagnosis against real servers of known behaviour (tests/known_servers.py): one that stalls
once for 1 s inside an 8 s level, and a FIFO server offered more than its capacity.

The run does not yet record a level second by second (issue 22), so a small open-loop client here
sends the level (requests due at an even rate, pipelined over keep-alive connections, latency
from when each was due), keeps every request's times, and sums them into `Second`s as the
recorder will. The stall's true start and length come from the requests themselves: the first
request due that waited, and the longest wait.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from dataclasses import dataclass

import pytest
from known_servers import known_server

from dbladder.result.diagnosis import Second, diagnose

pytestmark = pytest.mark.serial

PASS_MS = 50.0
CONNECTIONS = 20
REQUEST = b"GET / HTTP/1.1\r\nhost: known\r\n\r\n"


@dataclass
class Sent:
    due: float
    sent: float
    answered: float = math.nan


async def send_level(port: int, rate: float, seconds: float, start_in: float) -> tuple[float, list[Sent]]:
    """Send `rate` requests a second for `seconds`, starting `start_in` s from now; the level's
    origin (time.monotonic(), the known server's clock) and every request's times."""
    connections = [await asyncio.open_connection("127.0.0.1", port) for _ in range(CONNECTIONS)]
    waiting: list[deque[Sent]] = [deque() for _ in connections]
    requests: list[Sent] = []

    async def read(index: int) -> None:
        reader = connections[index][0]
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            waiting[index].popleft().answered = time.monotonic()

    readers = [asyncio.create_task(read(i)) for i in range(CONNECTIONS)]
    origin = time.monotonic() + start_in
    count = int(rate * seconds)
    try:
        for number in range(count):
            due = origin + number / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            index = number % CONNECTIONS
            request = Sent(due, time.monotonic())
            waiting[index].append(request)
            connections[index][1].write(REQUEST)
            requests.append(request)
        deadline = time.monotonic() + 30
        while any(waiting) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    finally:
        for task in readers:
            task.cancel()
        for _, writer in connections:
            writer.close()
    return origin, requests


def per_second(origin: float, requests: list[Sent], seconds: int) -> list[Second]:
    """Each second of the level: sent in it, answered in it, and the p95 (nearest rank) in ms of
    the latency from due of the requests due in it."""
    result = []
    for k in range(seconds):
        start, end = origin + k, origin + k + 1
        due = sorted(1000 * (r.answered - r.due) for r in requests if start <= r.due < end)
        p95 = due[max(0, math.ceil(0.95 * len(due)) - 1)] if due else None
        result.append(
            Second(
                sent=sum(start <= r.sent < end for r in requests),
                answered=sum(start <= r.answered < end for r in requests),
                failed=0,
                p95_ms=p95,
                max_ms=due[-1] if due else None,
            )
        )
    return result


@pytest.mark.slow
def test_a_server_that_stalls_once_for_a_second_is_a_stall_at_the_right_second():
    # The server stalls at origin + k * 4 s for 1 s; a level started 1.5 s after it came up meets
    # the stall at 4 s, 2.5 s into the level, and no other in its 6 s (the next is 6.5 s in): two
    # whole seconds on each side of it.
    with known_server("stall", period_s=4.0, stall_s=1.0) as server:
        origin, requests = asyncio.run(send_level(server.port, rate=100, seconds=6, start_in=1.5))
    assert all(not math.isnan(r.answered) for r in requests)
    waited = [r for r in requests if r.answered - r.due > 0.1]
    true_start = waited[0].due - origin
    true_length = max(r.answered - r.due for r in requests)
    assert true_length == pytest.approx(1.0, abs=0.1)  # the server did what it was told

    diagnosis = diagnose(per_second(origin, requests, 6), 100, PASS_MS)
    assert diagnosis.kind == "stall", diagnosis.line
    assert abs(diagnosis.evidence["stall_start_s"] - true_start) <= 0.5, (diagnosis.line, true_start)
    assert abs(diagnosis.evidence["stall_length_s"] - true_length) <= 0.3, (diagnosis.line, true_length)


@pytest.mark.slow
def test_a_fifo_server_above_its_capacity_is_saturation_not_a_stall():
    # Capacity 500 requests/s (2 ms each, one at a time), offered 600: the queue grows all level.
    with known_server("fifo", service_ms=2.0) as server:
        origin, requests = asyncio.run(send_level(server.port, rate=600, seconds=6, start_in=0.5))
    seconds = per_second(origin, requests, 6)
    diagnosis = diagnose(seconds, 600, PASS_MS)
    assert diagnosis.kind == "saturation", diagnosis.line
    assert diagnosis.evidence["answered_rps"] == pytest.approx(500, rel=0.05)
