"""The report's setup section: the runs, the machine, the load, the service and data, each engine.

Every setting is written out ("Postgres vs MariaDB on two dedicated CPUs": "nothing is left on a default that
could differ"): a
table per topic, one column per run when the runs differ, and each engine's settings as the
configuration file they would be (`settings.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..engine_registry import setting_facts
from ..result.context import DataFilesystem, RolePlacement
from ..result.level import HostWindow
from ..result.run import EngineAsRun, RunResult
from . import figures as fig
from .blocks import Block, Code, Heading, Paragraph, TableBlock, TableColumn
from .plan_views import view_of
from .runs import Round, sizes_words, write_share
from .settings import settings_file


def pass_mark_words(result: RunResult) -> str:
    """The pass mark in words: "p95 under 50 ms and under 1 % failed"."""
    mark = result.pass_mark
    p95, fail = fig.plain(mark.p95_ms), fig.plain(mark.max_fail_pct)
    return f"p95 under {p95} ms and under {fail} % failed"


def _facts(names: Sequence[str], facts: Sequence[dict[str, str]]) -> TableBlock:
    """A two-column table when every column would say the same, else one column per name."""
    keys = list(dict.fromkeys(key for fact in facts for key in fact))
    if all(fact == facts[0] for fact in facts):
        return TableBlock(
            [TableColumn("", numeric=False), TableColumn("", numeric=False)],
            [[key, facts[0].get(key, "-")] for key in keys],
            kind="facts",
        )
    return TableBlock(
        [TableColumn("", numeric=False), *(TableColumn(name, numeric=False) for name in names)],
        [[key, *(fact.get(key, "-") for fact in facts)] for key in keys],
        kind="facts",
    )


def _run_facts(result: RunResult) -> dict[str, str]:
    return {
        "dbladder": fig.plain(result.dbladder_version),
        "started": fig.plain(result.started_at),
        "finished": fig.plain(result.finished_at),
        "status": fig.plain(result.status),
        "stopped because": fig.plain(result.stopped_because),
    }


def _bytes(value: Any) -> str:
    number = fig.number(value)
    return "-" if number is None else f"{number / 2**30:,.1f} GiB"


_ENVIRONMENT: dict[str, tuple[str, Callable[[Any], str]]] = {
    # key: (what the table calls it, how to show it); other keys are shown as they are.
    "cpu_model": ("CPU", fig.plain),
    "cpu_cores": ("CPUs (logical, usable)", fig.plain),
    "cpu_cores_physical": ("CPU cores (physical)", fig.plain),
    "cpu_quota": ("CPU quota (cgroup)", lambda v: "none" if v is None else f"{fig.plain(v)} CPUs"),
    "memory_total_bytes": ("memory", _bytes),
    "memory_limit_bytes": ("memory limit (cgroup)", lambda v: "none" if v is None else _bytes(v)),
    "dependencies": (
        "dependencies",
        lambda v: (
            ", ".join(f"{k} {fig.plain(x)}" for k, x in v.items()) if isinstance(v, dict) else fig.plain(v)
        ),
    ),
    "data_filesystem": (
        "data filesystem",
        lambda v: v.words() if isinstance(v, DataFilesystem) else fig.plain(v),
    ),
}
"""The environment's typed figures (`result.run.Environment`), each read as its attribute."""
_NOT_MACHINE = ("engine",)  # shown in the engine's own section


def _machine_facts(result: RunResult) -> dict[str, str]:
    facts = {}
    for key, value in result.environment.facts().items():
        if key in _NOT_MACHINE:
            continue
        if key in _ENVIRONMENT:
            name, show = _ENVIRONMENT[key]
            facts[name] = show(getattr(result.environment, key))
        elif isinstance(value, dict):
            facts[fig.heading(key)] = ", ".join(f"{k}: {fig.plain(v)}" for k, v in value.items())
        else:
            facts[fig.heading(key)] = fig.plain(value)
    return facts


def _processes(result: RunResult) -> Any:
    """The generator processes a run used; older results carry only the configured number."""
    generators = result.generators
    processes = (generators.processes if generators else None) or result.config.generator_processes
    if generators is not None and generators.sized_to_machine:
        return f"{processes} (sized to the machine)"
    return processes


def placement_words(placement: RolePlacement) -> str:
    """Where each role ran: 'generator on CPU 0; service on any CPU; database on CPU 1, capped at
    512 MiB (page cache included); page cache dropped before the run'."""
    parts = []
    for role in ("generator", "service", "database"):
        limits = placement.of(role)
        cpus, memory = limits.cpus, limits.memory
        words = f"{role} on CPU {cpus}" if cpus else f"{role} on any CPU"
        if memory:
            words += f", capped at {fig.plain(round(memory / 2**20))} MiB (page cache included)"
        parts.append(words)
    if placement.drop_caches:
        parts.append("page cache dropped before the run")
    return "; ".join(parts)


def _load_facts(result: RunResult) -> dict[str, str]:
    config = result.config
    share = write_share(result) or 0
    direct = config.target == "direct"
    workload = result.workload
    mix = (workload.mix if workload else None) or {}
    plan = view_of(result)
    facts = {
        "workload": f"{fig.plain(workload.name if workload else None)} "
        f"({fig.plain(workload.source if workload else None)})",
        "preset": fig.plain(config.preset),
        "writes": f"{100 * share:g} % of requests write; the rest read",
        "mix": ", ".join(f"{name} {100 * part:.3g} %" for name, part in mix.items()) or "not recorded",
        **plan.facts(),
        "pass mark": pass_mark_words(result),
        "after a failed level": plan.after_failure(config.continue_after_fail),
        "target": "the engine driver, no web service" if direct else "the workload's web service over HTTP",
        "generator": f"{fig.plain(_processes(result))} process(es), up to "
        f"{fig.rate(config.in_flight or 0)} requests in flight each, "
        f"{fig.plain(config.timeout)} s timeout" + (", busy-waiting clock" if config.precise_clock else ""),
    }
    if result.placement is not None:
        facts["roles"] = placement_words(result.placement)
    return facts


def _service_facts(result: RunResult) -> dict[str, str]:
    config = result.config
    seed = config.seed
    seeding = result.seeding
    facts = {}
    if config.target != "direct":
        facts["service workers"] = fig.plain(config.workers)
    facts["connection pool"] = f"{fig.plain(config.pool_size)} connections in all"
    if result.engine is not None:
        facts.update(setting_facts(result.engine.engine, config.engine_settings))
    fresh = result.fresh
    if not seed and fresh is not None:
        # A comparison seeds once and gives every run the data as seeded (dbladder.data.fresh).
        took = fig.number(fresh.seconds)
        facts["data"] = f"the data as seeded, given back by {fig.plain(fresh.method)} before the run" + (
            "" if took is None else f" in {took:.1f} s" if took >= 0.1 else f" in {1000 * took:.0f} ms"
        )
    elif seed is not None:
        facts["data"] = f"{sizes_words(result)}, seed {fig.plain(seed)}, loaded fresh before the run" + (
            f" in {seeding.total_seconds:.1f} s" if seeding and seeding.total_seconds is not None else ""
        )
    else:
        facts["data"] = "already in the database (not reloaded)"
    return facts


def _engine_facts(engine: EngineAsRun) -> dict[str, str]:
    return {
        "version": fig.plain(engine.server_version),
        "driver": f"{fig.plain(engine.driver)} {fig.plain(engine.driver_version)}",
        "transport": fig.plain(engine.transport),
        "isolation": fig.plain(engine.isolation),
        "prepared statements": fig.plain(engine.prepared_statements),
        "pool": fig.plain(engine.pool_size),
        "durable": "yes: a write is acknowledged only after it reaches the disk"
        if engine.durable
        else f"NO: {engine.durability_note or 'see the settings'}",
    }


def setup_section(rounds: list[Round]) -> list[Block]:
    """The setup section: what every run ran on and with, each engine's settings written out."""
    runs = [run for round_ in rounds for run in round_.runs]
    plain_names = [run.name for run in runs]
    names = [
        run.name if plain_names.count(run.name) == 1 else f"{run.name} ({round_.title})"
        for round_ in rounds
        for run in round_.runs
    ]
    blocks: list[Block] = [Heading(2, "Setup")]
    for heading, facts_of in (
        ("Runs", _run_facts),
        ("Machine", _machine_facts),
        ("Load", _load_facts),
        ("Service and data", _service_facts),
    ):
        blocks += [Heading(3, heading), _facts(names, [facts_of(run.result) for run in runs])]
        if heading == "Machine":
            for name, run in zip(names, runs, strict=True):
                blocks += machines_blocks(run.result, name if len(runs) > 1 else None)
    seen: set[str] = set()
    for round_ in rounds:
        for group in round_.groups:
            if group.label in seen:
                continue
            seen.add(group.label)
            engines = [run.result.engine for run in group.runs]
            first = engines[0]
            blocks.append(Heading(3, group.label))
            if first is None:
                blocks.append(Paragraph("This run recorded no engine description (it stopped before one)."))
                continue
            blocks.append(_facts([group.label], [_engine_facts(first)]))
            caption, text = settings_file(first)
            blocks.append(Code(caption + ", as the server reported them at the start of the run", text))
            if any(engine != first for engine in engines[1:]):
                blocks.append(Paragraph("The runs of this engine did not all report the same settings."))
    return blocks


def machines_blocks(result: RunResult, name: str | None = None) -> list[Block]:
    """A cluster run's machines (docs/cluster.md): each one's role, CPU, memory and clock offset,
    then each level's CPU on every host its agent sampled; nothing for a run on one machine."""
    machines = result.machines
    if not machines:
        return []
    blocks: list[Block] = [Heading(3, "Machines" if name is None else f"Machines: {name}")]
    rows = []
    for machine in machines:
        clock = machine.clock
        offset = (
            "this machine's clock"
            if clock is None
            else f"{clock.offset_s * 1000:+,.3f} ms +- {clock.bound_s * 1000:,.3f} ms"
        )
        rows.append(
            [
                fig.plain(machine.name),
                fig.plain(machine.role),
                fig.plain(machine.host),
                fig.plain(machine.cpu_model),
                fig.plain(machine.cores),
                _bytes(machine.memory_bytes),
                offset,
            ]
        )
    headers = ("name", "role", "host", "CPU", "cores", "memory", "clock offset")
    blocks.append(TableBlock([TableColumn(header, numeric=False) for header in headers], rows, kind="facts"))
    hosts = list(dict.fromkeys(host for level in result.levels for host in level.hosts or {}))
    if hosts:
        blocks.append(Paragraph("CPU in use on each sampled host, % of its CPUs, over each level's window:"))
        level_rows = [
            [
                fig.plain(level.index + 1),
                f"{level.offered_rps:,.0f}",
                *(_host_cpu((level.hosts or {}).get(host)) for host in hosts),
            ]
            for level in result.levels
        ]
        columns = [TableColumn("level"), TableColumn("offered req/s"), *(TableColumn(host) for host in hosts)]
        blocks.append(TableBlock(columns, level_rows, kind="facts"))
        for host in hosts:
            lost = [level for level in result.levels if _host_cpu((level.hosts or {}).get(host)) == LOST]
            if lost:
                cause = (lost[0].hosts or {})[host].cause
                blocks.append(Paragraph(f"{host}: not measured from level {lost[0].index + 1} on ({cause})."))
    return blocks


LOST = "not measured"


def _host_cpu(figures: HostWindow | None) -> str:
    """A sampled host's CPU in a level: "-" without a sample in its window, "not measured" once its
    agent was lost."""
    if figures is None:
        return "-"
    if figures.measured is False:
        return LOST
    return f"{figures.busy:.0f} %"
