"""Round trips counted by the `orm` workload against what crosses the wire, seen by the latency relay.

The workload counts round trips from the ORM's events (statements, BEGIN where the driver sends
it, COMMIT, ROLLBACK, the pool's ROLLBACK on return where the driver sends it). The relay counts
what the client actually wrote to the server: a known answer the count must meet exactly.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from dbladder.engines import opened
from dbladder.transport import background_relay, relay_target, through_relay
from dbladder.urls import parse_url
from dbladder.workloads.base import Draw
from dbladder.workloads.orm import data, workload
from dbladder.workloads.orm.context import open_context

SIZES = {"users": 12, "controls": 30, "assets": 60, "assessments": 8, "findings": 400}
REQUESTS = 8


@pytest.mark.parametrize("fixture", ["postgres_url", "mariadb_url"])
def test_counted_round_trips_are_what_the_relay_forwards(request, fixture):
    url = parse_url(request.getfixturevalue(fixture))

    async def seed() -> None:
        async with opened(url) as engine:
            await data.load(engine, 1, SIZES)

    asyncio.run(seed())
    seen: dict[str, tuple[int, int, int]] = {}
    with background_relay(relay_target(url), 0) as relay:

        async def scenario() -> None:
            context = await open_context(through_relay(url, relay.relay.address))
            draw = Draw(random.Random(2).random)
            try:
                for operation in workload.operations:
                    # The first requests prepare statements on the connection (asyncpg: a round
                    # trip of its own per new statement); count after them.
                    for _ in range(3):
                        await operation.run(context, operation.draw(draw, SIZES))
                    before = relay.relay.stats.chunks_up
                    counted = context.query_counts()[operation.name]
                    for _ in range(REQUESTS):
                        answer = await operation.run(context, operation.draw(draw, SIZES))
                        assert answer.status in (200, 201), answer
                    await asyncio.sleep(0.05)  # the relay thread forwards the last chunk
                    after = context.query_counts()[operation.name]
                    seen[operation.name] = (
                        relay.relay.stats.chunks_up - before,
                        after["round_trips"] - counted["round_trips"],
                        after["statements"] - counted["statements"],
                    )
            finally:
                await context.close()

        asyncio.run(scenario())
    for name, (forwarded, round_trips, statements) in seen.items():
        assert round_trips == forwarded, name
        # Beyond its statements, a request is one transaction: BEGIN or the pool's ROLLBACK, and
        # its COMMIT or ROLLBACK.
        assert round_trips == statements + 2 * REQUESTS, name
    assert seen["list_assets"][2] > 20 * REQUESTS  # the N+1: dozens of statements a request


def test_sqlite_has_statements_and_no_round_trips(sqlite_url):
    async def scenario() -> dict[str, dict[str, int]]:
        async with opened(sqlite_url) as engine:
            await data.load(engine, 1, SIZES)
        context = await open_context(parse_url(sqlite_url))
        try:
            await workload.operation("dashboard").run(context, (data.ADMIN_USER_ID,))
            return context.query_counts()
        finally:
            await context.close()

    counts = asyncio.run(scenario())
    assert (counts["dashboard"]["requests"], counts["dashboard"]["statements"]) == (1, 4)
    assert counts["dashboard"]["round_trips"] == 0
