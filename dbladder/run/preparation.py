"""The database made ready for the load: the workload's SQL checked, the data seeded (or its
sizes read), the engine described, the mix worked out."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from ..data.seeding import SeedReport, seed
from ..engines import opened
from ..engines.base import EngineInfo, EngineOptions
from ..workloads.base import DataSpec, Mix, Workload
from .config import RunConfig
from .progress import Progress, QuietProgress, seeding_pass


@dataclass(frozen=True)
class Prepared:
    """The database as the load will find it: its engine's settings, how it was seeded, the mix."""

    engine: EngineInfo
    seeding: dict[str, Any] | None
    data: DataSpec
    mix: Mix


def prepare_here(config: RunConfig) -> Prepared:
    """`prepare_database` of the config's workload, quietly, on the machine that calls it (a
    cluster's db or app agent: where the engine keeps the data)."""
    return asyncio.run(prepare_database(config, config.round_workload(), QuietProgress()))


async def prepare_database(config: RunConfig, workload: Workload, progress: Progress) -> Prepared:
    """Check the workload's SQL, seed (unless told not to), describe the engine, and read the sizes."""
    options = EngineOptions(pool_size=config.pool_size)
    async with opened(config.url, replace(options, pool_size=4)) as engine:
        seeding: SeedReport | None = None
        if config.seed is not None:
            data = DataSpec(config.seed, workload.scaled_sizes(config.scale, config.sizes))
            planned = workload.planned_rows(data.sizes)
            sizes = ", ".join(f"{count:,} {name}" for name, count in data.sizes.items())
            progress.message(f"seeding the {workload.name} workload: {sizes} (seed {data.seed})")
            seeding = await seed(engine, workload, data, seeding_pass(progress, config.url.engine, planned))
        else:
            data = DataSpec(0, await workload.sizes_in(engine))
        await workload.check_sql(engine)
        info = await engine.describe()
    info = replace(info, pool_size=config.pool_size)
    return Prepared(
        info, seeding.to_dict() if seeding else None, data, workload.mix(config.write_share, config.weights)
    )
