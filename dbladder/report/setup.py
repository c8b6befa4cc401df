"""The report's setup section: the runs, the machine, the load, the service and data, each engine.

Every setting is written out ("Postgres vs MariaDB on two dedicated CPUs": "nothing is left on a default that
could differ"): a
table per topic, one column per run when the runs differ, and each engine's settings as the
configuration file they would be (`settings.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import closed
from . import figures as fig
from .blocks import Block, Code, Column, Heading, Paragraph, Table
from .runs import Round, sizes_words, workload_of, write_share
from .settings import settings_file


def pass_mark_words(result: dict[str, Any]) -> str:
    """The pass mark in words: "p95 under 50 ms and under 1 % failed"."""
    mark = result.get("pass_mark", {})
    p95, fail = fig.plain(mark.get("p95_ms")), fig.plain(mark.get("max_fail_pct"))
    return f"p95 under {p95} ms and under {fail} % failed"


def _facts(names: Sequence[str], facts: Sequence[dict[str, str]]) -> Table:
    """A two-column table when every column would say the same, else one column per name."""
    keys = list(dict.fromkeys(key for fact in facts for key in fact))
    if all(fact == facts[0] for fact in facts):
        return Table(
            [Column("", numeric=False), Column("", numeric=False)],
            [[key, facts[0].get(key, "-")] for key in keys],
            kind="facts",
        )
    return Table(
        [Column("", numeric=False), *(Column(name, numeric=False) for name in names)],
        [[key, *(fact.get(key, "-") for fact in facts)] for key in keys],
        kind="facts",
    )


def _run_facts(result: dict[str, Any]) -> dict[str, str]:
    return {
        "dbladder": fig.plain(result.get("dbladder_version")),
        "started": fig.plain(result.get("started_at")),
        "finished": fig.plain(result.get("finished_at")),
        "status": fig.plain(result.get("status")),
        "stopped because": fig.plain(result.get("stopped_because")),
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
        lambda v: (
            f"{v.get('type')} on {v.get('device')} at {v.get('mountpoint')} ({v.get('options')})"
            if isinstance(v, dict)
            else fig.plain(v)
        ),
    ),
}
_NOT_MACHINE = ("engine",)  # shown in the engine's own section


def _machine_facts(result: dict[str, Any]) -> dict[str, str]:
    facts = {}
    for key, value in (result.get("environment") or {}).items():
        if key in _NOT_MACHINE:
            continue
        if key in _ENVIRONMENT:
            name, show = _ENVIRONMENT[key]
            facts[name] = show(value)
        elif isinstance(value, dict):
            facts[fig.heading(key)] = ", ".join(f"{k}: {fig.plain(v)}" for k, v in value.items())
        else:
            facts[fig.heading(key)] = fig.plain(value)
    return facts


def _processes(result: dict[str, Any]) -> Any:
    """The generator processes a run used; older results carry only the configured number."""
    generators = result.get("generators") or {}
    processes = generators.get("processes") or result.get("config", {}).get("generator_processes")
    if generators.get("sized_to_machine"):
        return f"{processes} (sized to the machine)"
    return processes


def _load_facts(result: dict[str, Any]) -> dict[str, str]:
    config = result.get("config", {})
    share = write_share(result) or 0
    direct = config.get("target") == "direct"
    workload = workload_of(result)
    mix = workload.get("mix") or {}
    facts = {
        "workload": f"{fig.plain(workload.get('name'))} ({fig.plain(workload.get('source'))})",
        "preset": fig.plain(config.get("preset")),
        "writes": f"{100 * share:g} % of requests write; the rest read",
        "mix": ", ".join(f"{name} {100 * part:.3g} %" for name, part in mix.items()) or "not recorded",
        **(_users_facts(result) if closed.is_closed(result) else _ladder_facts(result)),
        "pass mark": pass_mark_words(result),
        "after a failed level": "climb on" if config.get("continue_after_fail") else "stop",
        "target": "the engine driver, no web service" if direct else "the workload's web service over HTTP",
        "generator": f"{fig.plain(_processes(result))} process(es), up to "
        f"{fig.rate(config.get('in_flight', 0))} requests in flight each, "
        f"{fig.plain(config.get('timeout'))} s timeout"
        + (", busy-waiting clock" if config.get("precise_clock") else ""),
    }
    if closed.is_closed(result):
        # The runner plays every phase of a closed plan: users slow themselves down instead.
        facts["after a failed level"] = "every phase runs (a failed level does not stop the plan)"
    return facts


def _ladder_facts(result: dict[str, Any]) -> dict[str, str]:
    ladder = result.get("config", {}).get("ladder") or {}
    start, step, steps = ladder.get("start", 0), ladder.get("step", 0), ladder.get("steps", 1)
    return {
        "ladder": f"{fig.rate(start)} req/s, +{fig.rate(step)} per level, {steps} levels "
        f"(top {fig.rate(start + step * (steps - 1))} req/s)",
        "hold": f"{fig.plain(ladder.get('hold'))} s per level; the first {fig.plain(ladder.get('warmup'))} s "
        "left out of its figures",
        "model": "open: each request is sent when it is due, whatever the service does; latency is "
        "measured from when it was due",
    }


def _users_facts(result: dict[str, Any]) -> dict[str, str]:
    mean = closed.mean_think(result)
    counts = closed.user_counts(result)
    could = (
        f"; {fig.rate(max(counts))} users could send at most {fig.rate(max(counts) / mean)} req/s"
        if mean and counts
        else ""
    )
    return {
        "users": closed.plan_words(result)
        + "; the arrival is left out of the level's figures"
        + (
            " (a spike: the phase with the most users comes between two quieter ones)"
            if closed.is_spike(result)
            else ""
        ),
        "think time": f"{closed.think_words(result)} between an answer and the user's next request, "
        f"uniform{could}",
        "model": "closed: each user sends a request, waits for its answer, thinks and sends the next, so "
        "a slower answer means fewer requests; latency is measured from when the think time ended",
    }


def _service_facts(result: dict[str, Any]) -> dict[str, str]:
    config = result.get("config", {})
    seed = config.get("seed")
    seeding = result.get("seeding") or {}
    facts = {}
    if config.get("target") != "direct":
        facts["service workers"] = fig.plain(config.get("workers"))
    facts["connection pool"] = f"{fig.plain(config.get('pool_size'))} connections in all"
    if (result.get("engine") or {}).get("engine") == "sqlite":
        facts["SQLite writers"] = (
            "one connection takes every write" if config.get("sqlite_writers") else "every connection writes"
        )
    fresh = result.get("fresh")
    if not seed and isinstance(fresh, dict):
        # A comparison seeds once and gives every run the data as seeded (dbladder.data.fresh).
        took = fig.number(fresh.get("seconds"))
        facts["data"] = (
            f"the data as seeded, given back by {fig.plain(fresh.get('method'))} before the run"
            + ("" if took is None else f" in {took:.1f} s" if took >= 0.1 else f" in {1000 * took:.0f} ms")
        )
    elif seed is not None:
        facts["data"] = f"{sizes_words(result)}, seed {fig.plain(seed)}, loaded fresh before the run" + (
            f" in {seeding['total_seconds']:.1f} s" if "total_seconds" in seeding else ""
        )
    else:
        facts["data"] = "already in the database (not reloaded)"
    return facts


def _engine_facts(engine: dict[str, Any]) -> dict[str, str]:
    durable = engine.get("durable")
    return {
        "version": fig.plain(engine.get("server_version")),
        "driver": f"{fig.plain(engine.get('driver'))} {fig.plain(engine.get('driver_version'))}",
        "transport": fig.plain(engine.get("transport")),
        "isolation": fig.plain(engine.get("isolation")),
        "prepared statements": fig.plain(engine.get("prepared_statements")),
        "pool": fig.plain(engine.get("pool_size")),
        "durable": "yes: a write is acknowledged only after it reaches the disk"
        if durable
        else f"NO: {engine.get('durability_note') or 'see the settings'}",
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
    seen: set[str] = set()
    for round_ in rounds:
        for group in round_.groups:
            if group.label in seen:
                continue
            seen.add(group.label)
            engines = [run.result.get("engine") for run in group.runs]
            blocks.append(Heading(3, group.label))
            if engines[0] is None:
                blocks.append(Paragraph("This run recorded no engine description (it stopped before one)."))
                continue
            blocks.append(_facts([group.label], [_engine_facts(engines[0])]))
            caption, text = settings_file(engines[0])
            blocks.append(Code(caption + ", as the server reported them at the start of the run", text))
            if any(engine != engines[0] for engine in engines[1:]):
                blocks.append(Paragraph("The runs of this engine did not all report the same settings."))
    return blocks
