"""The database made ready for a round (dbladder.run.preparation): seeded, described, its mix worked out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dbladder.run.config import RunConfig
from dbladder.run.preparation import prepare_database
from dbladder.run.progress import QuietProgress
from dbladder.workloads.registry import load_workload

SMALL = {"products": 50, "orders": 20}


def test_a_fresh_database_is_seeded_and_a_seeded_one_read_as_it_is(tmp_path: Path) -> None:
    shop = load_workload("shop")
    url = f"sqlite:///{tmp_path}/shop.db"
    seeded = asyncio.run(
        prepare_database(RunConfig(db_url=url, sizes=SMALL, pool_size=6), shop, QuietProgress())
    )
    assert seeded.seeding is not None and seeded.data.seed == 1
    assert dict(seeded.data.sizes) == shop.scaled_sizes(1.0, SMALL)
    assert seeded.engine.engine == "sqlite" and seeded.engine.pool_size == 6
    assert seeded.mix == shop.mix()
    kept = asyncio.run(
        prepare_database(RunConfig(db_url=url, seed=None, write_share=0.0), shop, QuietProgress())
    )
    assert kept.seeding is None and dict(kept.data.sizes) == dict(seeded.data.sizes)
    assert kept.mix == shop.mix(0.0)
