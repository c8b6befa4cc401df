"""A declared app's integrity check: what its INSERT ... RETURNING answered must be in the table."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from dbladder.data.seeding import seed
from dbladder.engines import opened
from dbladder.load.acknowledged import AcknowledgedWrites
from dbladder.workloads.base import DataSpec, Draw
from dbladder.workloads.registry import load_workload

EXAMPLE = Path(__file__).parents[2] / "examples" / "todo.py"
SMALL = DataSpec(5, {"users": 50, "todos": 400})


def test_added_todos_are_found_and_a_deleted_one_is_lost(any_url):
    todo = load_workload(str(EXAMPLE))
    add, toggle = todo.operation("add_todo"), todo.operation("toggle")
    draw = Draw(random.Random(3).random)

    async def scenario():
        async with opened(any_url) as engine:
            await seed(engine, todo, SMALL)
            store = AcknowledgedWrites()
            for _ in range(5):
                args = add.draw(draw, SMALL.sizes)
                answer = await add.run(engine, args)
                store.add("add_todo", add.acknowledge(args, answer.body))
            args = toggle.draw(draw, SMALL.sizes)
            store.add("toggle", toggle.acknowledge(args, (await toggle.run(engine, args)).body))
            clean = await todo.verify(engine, SMALL, store.by_operation())
            gone = store.by_operation()["add_todo"][2][0]
            async with engine.transaction() as session:
                await session.execute("DELETE FROM todos WHERE id = ?", (gone,))
            return gone, clean, await todo.verify(engine, SMALL, store.by_operation())

    gone, clean, after = asyncio.run(scenario())
    assert (clean["acknowledged"], clean["present"], clean["lost"]) == (6, 5, 0)
    assert "not checked (they return nothing to look up): toggle" in clean["what"]
    assert (after["lost"], after["lost_ids"], after["present"]) == (1, [gone], 4)
