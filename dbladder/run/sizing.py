"""How many generator processes a round runs, and what each is given (`process_spec`): the one
place the config reaches the generator processes."""

from __future__ import annotations

import os

from ..load.fleet import PartRange, ProcessSpec
from .config import RunConfig
from .load_target import LoadTarget
from .preparation import Prepared


def generator_processes(config: RunConfig) -> int:
    """How many generator processes a round runs: as configured, or sized to the machine (0)."""
    if config.generator_processes:
        return config.generator_processes
    if config.target != "direct":
        return 1
    generator_cpus = config.placement.generator.cpus
    cores = len(generator_cpus) if generator_cpus else os.cpu_count() or 1
    if config.database.kind.has_server and not config.placement.database.cpus:
        # A server on this host needs cores of its own: with PostgreSQL on 2 cores, one process
        # holding all 8 connections passed 10,000 req/s (p95 30 ms) where two processes of 4 or 8
        # failed at 7,700 and 10,000 (p95 40-555 ms), docs/direct.md. A server on CPUs of its
        # own (--cpus database=...) leaves the generator's to the generator.
        cores = max(1, cores // 2)
    return max(1, min(cores, config.pool_size, 64))


def process_spec(
    config: RunConfig,
    prepared: Prepared,
    target: LoadTarget,
    processes: int,
    parts: PartRange | None = None,
) -> ProcessSpec:
    """What every generator process of the round is given: the one place the config reaches them.

    `parts` is the range of the run's parts this machine's `processes` send when fleets on
    several machines share the run; None (one machine) is all of them."""
    part_range = parts if parts is not None else PartRange.whole(processes)
    # A user whose request finds no free connection is dropped: leave room for every user (the
    # users are spread over every part of the run, on every machine).
    in_flight = max(config.in_flight, -(-config.plan.peak_users // part_range.total))
    spec = ProcessSpec(
        config.plan,
        workload=target.workload or config.workload,
        mix=prepared.mix,
        sizes=dict(prepared.data.sizes),
        mix_seed=config.mix_seed,
        host=target.host,
        port=target.port,
        in_flight=in_flight,
        timeout=config.timeout,
        target=config.target,
        db_url=target.db_url,
        connections=config.pool_size,
        precise_clock=config.precise_clock,
        part_range=parts,
    )
    spec.parts_of(processes)  # a range of another size than the fleet is refused here, not at its start
    return spec
