"""The records of acknowledged writes: packed, shipped between processes, and filed only for 2xx writes."""

from __future__ import annotations

import asyncio
import pickle

from dbladder.data.seeding import seed
from dbladder.engines import opened
from dbladder.load.acknowledged import AcknowledgedWrites, AcknowledgingTarget, Records
from dbladder.load.targets.direct import DirectTarget
from dbladder.workloads import shop


def test_whole_number_records_pack_into_eight_bytes_a_number_and_survive_a_pickle():
    store = AcknowledgedWrites()
    for n in range(1000):
        store.add("create", (n, 10 * n, 1, 2, 3, 4))
    store.add("create", (1, "text"))  # not packable: kept as it is
    store.add("post", (2**63, 1))  # too large for int64: kept as it is
    store.add("toggle", ())  # a write that answered nothing: still counted
    assert store.nbytes == 1000 * 6 * 8
    chunk = pickle.loads(pickle.dumps(store.take()))
    assert store.count == 0 and store.take() is None
    parent = AcknowledgedWrites()
    parent.extend(chunk)
    parent.extend(chunk)
    records = parent.by_operation()
    assert parent.count == 2 * 1003 and len(records["toggle"]) == 2
    create = records["create"]
    assert len(create) == 2002
    assert create[0] == (0, 0, 1, 2, 3, 4) and create[999] == (999, 9990, 1, 2, 3, 4)
    assert create[-1] == (1, "text") and list(create)[-1] == (1, "text")
    assert records["post"][0] == (2**63, 1)
    (block,) = create.columns().values()
    assert block.shape == (2000, 6) and int(block[1000, 1]) == 0


def test_records_of_mixed_widths_read_as_one_sequence():
    from array import array

    records = Records({2: array("q", [1, 2, 3, 4]), 3: array("q", [5, 6, 7])}, [("x",)])
    assert list(records) == [(1, 2), (3, 4), (5, 6, 7), ("x",)]
    assert [records[i] for i in range(len(records))] == list(records)
    assert records[1:3] == [(3, 4), (5, 6, 7)]


def test_direct_target_files_the_writes_answered_2xx_and_nothing_else(sqlite_url):
    data = shop.dataset(products=50, orders=10, seed=2)
    create = [op.name for op in shop.workload.operations].index("create")
    product = [op.name for op in shop.workload.operations].index("product")

    async def scenario():
        async with opened(sqlite_url) as engine:
            await seed(engine, shop.workload, data)
            store = AcknowledgedWrites()
            target = AcknowledgingTarget(DirectTarget(shop.workload, engine, 10, 5.0), shop.workload, store)
            results = []
            requests = [
                (create, (1, ((1, 2), (2, 1)))),
                (product, (3,)),
                (create, (2, ((4, 1), (999, 1)))),  # unknown product: 409, nothing acknowledged
                (create, (3, ((5, 3), (6, 1)))),
            ]
            for request in requests:
                assert target.send(target.render(request), lambda token, result, body: results.append(result))
                while target.in_flight:
                    await asyncio.sleep(0.001)
            return results, store

    results, store = asyncio.run(scenario())
    assert results == [201, 200, 409, 201]
    records = list(store.by_operation()["create"])
    assert [record[0] for record in records] == [11, 12] or [record[0] for record in records] == [11, 13]
    assert [record[2:] for record in records] == [(1, 2, 2, 1), (5, 3, 6, 1)]
    assert store.unreadable == 0
