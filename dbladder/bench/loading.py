"""Seeding a workload's data before a bench (`dbladder bench --scale`): the rounds run on Chirp's data,
the native reference on the shop's."""

from __future__ import annotations

from ..data.seeding import seed_database
from ..errors import InvalidConfig
from ..workloads.base import DataSpec
from ..workloads.registry import load_workload


def check_scale(scale: float) -> None:
    """InvalidConfig unless `scale` is above 0."""
    if not scale > 0:
        raise InvalidConfig([f"--scale must be above 0, not {scale}"])


async def load_data(url: str, workload_name: str, scale: float) -> None:
    """Seed the workload's data at `scale` (seed 1) into `url` and check its SQL on the engine."""
    check_scale(scale)
    workload = load_workload(workload_name)
    data = DataSpec(1, workload.scaled_sizes(scale))
    problems = workload.validate_sizes(data.sizes)
    if problems:
        raise InvalidConfig(problems)
    await seed_database(url, workload, data)
