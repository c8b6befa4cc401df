import asyncio
from contextlib import asynccontextmanager

from dbladder.data.seeding import seed
from dbladder.engines import EngineOptions, opened
from dbladder.load.targets.direct import DirectTarget, warm
from dbladder.workloads.base import Answer, DataSpec
from dbladder.workloads.registry import load_workload

SHOP = load_workload("shop")
SMALL = DataSpec(1, {"products": 50, "orders": 20})
INDEX = {op.name: number for number, op in enumerate(SHOP.operations)}


@asynccontextmanager
async def shop_target(url, connections, limit=10, timeout=5.0):
    """The shop seeded small at `url`, and a DirectTarget on it holding `connections` connections."""
    async with opened(url, EngineOptions(pool_size=connections)) as engine:
        await seed(engine, SHOP, SMALL)
        context = await SHOP.open(engine)
        yield engine, DirectTarget(SHOP, context, limit=limit, timeout=timeout, connections=connections)


def _request(name, *args):
    return (INDEX[name], args)


def test_a_sqlite_request_is_answered_inside_send_without_a_task(sqlite_url):
    async def scenario():
        async with shop_target(sqlite_url, 2) as (_engine, target):
            answers = []
            requests = [
                ("product", _request("product", 3)),
                ("missing", _request("product", 999)),
                ("page", _request("page", "cat-01", 0)),
                ("order", _request("order", 7)),
            ]
            for token, request in requests:
                assert target.send(
                    request, lambda token, result, body: answers.append((token, result)), token
                )
                # Answered before send returned: nothing left in flight, no task made.
                assert target.in_flight == 0
            assert answers == [("product", 200), ("missing", 404), ("page", 200), ("order", 200)]

    asyncio.run(scenario())


def test_server_requests_beyond_the_connections_wait_in_line_and_all_are_answered(postgres_url):
    async def scenario():
        async with shop_target(postgres_url, 2, limit=100) as (engine, target):
            await warm(engine, 2)
            answers = []
            for number in range(1, 41):
                target.send(
                    _request("product", number),
                    lambda token, result, body: answers.append((token, result)),
                    number,
                )
            # Two requests hold the two connections; the rest wait in the target's line.
            assert target.in_flight == 40
            assert len(target._running) == 2
            while target.in_flight:
                await asyncio.sleep(0.01)
            assert sorted(answers) == [(n, 200) for n in range(1, 41)]

    asyncio.run(scenario())


def test_the_in_flight_limit_counts_the_line(postgres_url):
    async def scenario():
        async with shop_target(postgres_url, 1, limit=3) as (_engine, target):
            sent = [target.send(_request("product", 1), lambda *answer: None) for _ in range(5)]
            assert sent == [True, True, True, False, False]
            while target.in_flight:
                await asyncio.sleep(0.01)

    asyncio.run(scenario())


def test_a_request_still_waiting_at_its_deadline_is_answered_timeout(postgres_url):
    async def scenario():
        async with shop_target(postgres_url, 1, timeout=0.05) as (engine, target):
            answers = []
            # The one connection is held outside the target, so the target's request cannot finish
            # and the next one waits in line: both are past their deadline at the sweep.
            async with engine.read():
                target.send(
                    _request("product", 1), lambda token, result, body: answers.append((token, result)), 1
                )
                target.send(
                    _request("product", 2), lambda token, result, body: answers.append((token, result)), 2
                )
                await asyncio.sleep(0.2)
            assert sorted(answers) == [(1, "timeout"), (2, "timeout")]
            assert target.in_flight == 0

    asyncio.run(scenario())


def test_an_operation_error_gets_the_status_the_service_would_answer():
    from dbladder.errors import Conflict, DatabaseTimeout, InvalidRequest, PoolTimeout
    from dbladder.load.targets.direct import failed_status
    from dbladder.outcomes import TIMEOUT

    assert failed_status(Conflict("out_of_stock", "no stock")) == 409
    assert failed_status(InvalidRequest("bad id")) == 400
    assert failed_status(TimeoutError()) == TIMEOUT
    assert failed_status(PoolTimeout("all busy")) == 503
    assert failed_status(DatabaseTimeout("no answer")) == 503
    assert failed_status(RuntimeError("a driver error")) == 500


def test_a_conflict_after_a_round_trip_is_answered_409_with_nothing_kept(postgres_url):
    async def scenario():
        async with shop_target(postgres_url, 1) as (_engine, target):
            answers = []
            # An order naming a product that does not exist: the transaction's first statements
            # go to the server (the request suspends), then the operation raises a Conflict.
            for token, items in (("unknown", ((999, 1),)), ("known", ((1, 1),))):
                target.send(
                    _request("create", 1, items),
                    lambda token, result, body: answers.append((token, result, body is not None)),
                    token,
                    keep_body=True,
                )
            while target.in_flight:
                await asyncio.sleep(0.01)
            assert sorted(answers) == [("known", 201, True), ("unknown", 409, False)]

    asyncio.run(scenario())


def test_an_operation_that_returns_no_answer_is_a_500_not_a_crash():
    from types import SimpleNamespace

    async def not_an_answer(context, args):
        return {"status": 200}  # a workload's defect: a dict, not an Answer

    async def answered(context, args):
        return Answer(200, {"ok": True})

    async def scenario():
        workload = SimpleNamespace(
            operations=[SimpleNamespace(run=not_an_answer), SimpleNamespace(run=answered)]
        )
        target = DirectTarget(workload, None, limit=10, timeout=5.0, connections=1)
        answers = []
        for index in (0, 1):
            target.send((index, ()), lambda token, result, body: answers.append((token, result, body)), index)
        assert answers == [(0, 500, None), (1, 200, None)]

    asyncio.run(scenario())
