"""The report's "what this does not show": the limits of a result, worked out from the result itself.

Each caveat is a short lead and a sentence, in the manner of the closing section of "Postgres vs MariaDB on
two dedicated CPUs". They are
generated from what the runs recorded (runs per engine, spread, steal, durability, data size, the
generator's own flags), so a report never claims more than its data carries and never forgets to
say when a figure was not measured.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..result.context import DatabaseSize
from ..result.level import LevelReads
from ..result.run import RunResult
from .figures import host_steal, number, plain, rate
from .plan_views import PlanView
from .runs import Group, Round, RunInRound, sizes_words, verdict

STEAL_PCT = 5.0  # above this mean steal in a level, another tenant was taking CPU (as observe/flags.py)
# "Postgres vs SQLite under load" holds each level 30 s, "Postgres vs MariaDB on two dedicated CPUs"
# 80 to 170 s.
SHORT_HOLD_S = 30.0


@dataclass(frozen=True)
class Caveat:
    lead: str
    text: str


def _listing(numbers: Sequence[int]) -> str:
    return ", ".join(str(n) for n in numbers)


def _one_run(rounds: Sequence[Round]) -> list[Caveat]:
    single = sorted({group.label for round_ in rounds for group in round_.groups if len(group.runs) == 1})
    if not single:
        return []
    engines = {group.label for round_ in rounds for group in round_.groups}
    who = "this engine" if len(engines) == 1 else _names(single)
    return [
        Caveat(
            "One run.",
            f"Each figure for {who} comes from a single run. Repeated runs on the same machine move by "
            'a few percent (the four spike runs of "Postgres vs MariaDB on two dedicated CPUs" moved by '
            "up to 6 %), so a gap of that size from one run is not a result.",
        )
    ]


def _spread(rounds: Sequence[Round]) -> list[Caveat]:
    found = []
    for round_ in rounds:
        groups = sorted(round_.groups, key=lambda group: group.median, reverse=True)
        for high, low in itertools.pairwise(groups):
            gap = high.median - low.median
            spread = max(high.highest - high.lowest, low.highest - low.lowest)
            if gap > 0 and (spread >= gap or not verdict(high, low).named):
                found.append(
                    Caveat(
                        "Spread larger than the gap.",
                        f"In {round_.title}, {_range(high)} and {_range(low)}: the runs of one engine "
                        f"differ by up to {rate(spread)} req/s, the medians by {rate(gap)}.",
                    )
                )
    return found


def _range(group: Group) -> str:
    return f"{group.label} ran {' / '.join(rate(run.sort_value) for run in group.runs)} req/s"


def _step(rounds: Sequence[Round]) -> list[Caveat]:
    """How finely each plan's headline is known: its own caveat, once for all its runs
    (`PlanView.precision`), a search's first, then a ladder's, then users'."""
    runs_of: dict[type[PlanView], list[tuple[str, PlanView]]] = {}
    for round_ in rounds:
        for run in round_.runs:
            runs_of.setdefault(type(run.plan), []).append((run.name, run.plan))
    found = []
    for view in sorted(runs_of, key=lambda view: view.precision_order):
        words = view.precision(runs_of[view])
        if words is not None:
            found.append(Caveat(*words))
    return found


def _think(rounds: Sequence[Round]) -> list[Caveat]:
    """A closed model's rate is bounded by its users' think time, whatever the engine could do."""
    found = []
    for round_ in rounds:
        text = round_.plan.think_caveat(round_.title)
        if text is not None:
            found.append(Caveat("Think time limits the rate.", text))
    return found


def _spike(rounds: Sequence[Round]) -> list[Caveat]:
    """Why a spike's recovery time could not be worked out, when it could not."""
    found = []
    for round_ in rounds:
        for run in round_.runs:
            note = run.result.spike.note if run.spike and run.result.spike else None
            if note:
                found.append(Caveat("Recovery not computed.", f"{run.name}: {note}."))
    return found


def _names(names: Sequence[str]) -> str:
    """Names joined as a sentence lists them: A; A and B; A, B and C."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _bounds(runs: Sequence[RunInRound]) -> list[Caveat]:
    found = []
    unreached: dict[tuple[str, float], tuple[PlanView, list[str]]] = {}
    for run in runs:
        if run.lower_bound:
            key = (run.plan.x_column, run.x(run.levels[-1]))
            unreached.setdefault(key, (run.plan, []))[1].append(run.name)
    for (_, top), (plan, names) in unreached.items():
        who = f"{_names(names)} held every level {'it' if len(names) == 1 else 'they'} "
        found.append(Caveat("Limit not reached.", plan.unreached(who, top)))
    for run in runs:
        if run.ceiling is None and run.levels and not run.spike:
            found.append(
                Caveat("No level held.", f"{run.name} failed its first level ({run.plan.first_failed()}")
            )
        if run.result.status not in ("complete", None):
            found.append(
                Caveat(
                    "Run not complete.",
                    f"{run.name} ended as {run.result.status!r} ({run.result.stopped_because}): "
                    f"it has {len(run.levels)} finished level(s).",
                )
            )
    return found


def _steal(runs: Sequence[RunInRound]) -> list[Caveat]:
    measured = False
    worst: tuple[float, RunInRound, int] | None = None
    for run in runs:
        for row in run.levels:
            steal = host_steal(row)
            if steal is None:
                continue
            measured = True
            if worst is None or steal > worst[0]:
                worst = (steal, run, row.number)
    if not measured:
        return [
            Caveat(
                "CPU steal not measured.",
                "The host's CPU figures were not recorded for this run: on a shared host, CPU taken by "
                'other tenants would go unseen ("Postgres vs MariaDB on two dedicated CPUs" saw steal '
                "climb from 6 % to 50 % on a shared host).",
            )
        ]
    if worst is not None and worst[0] > STEAL_PCT:
        steal, run, level_number = worst
        return [
            Caveat(
                "CPU steal.",
                f"Steal reached {steal:.1f} % of the CPU at level {level_number} of {run.name}: another "
                "tenant took CPU time during the run, so its figures, and runs at other times, are not "
                "comparable.",
            )
        ]
    return []


def _durability(rounds: Sequence[Round], runs: Sequence[RunInRound]) -> list[Caveat]:
    found = []
    for run in runs:
        engine = run.result.engine
        if engine is None:
            found.append(
                Caveat("Engine not described.", f"{run.name} recorded no engine settings or durability.")
            )
        elif engine.durable is False:
            found.append(
                Caveat(
                    "Durability not equal.",
                    f"{run.name} may acknowledge a write before it reaches the disk "
                    f"({engine.durability_note or 'see its settings'}): its write figures are not "
                    "comparable with a durable engine's.",
                )
            )
    for round_ in rounds:
        for group in round_.groups:
            kinds = {repr(_durability_of(run.result)) for run in group.runs}
            if len(kinds) > 1:
                found.append(
                    Caveat(
                        "Durability changed between runs.",
                        f"The runs of {group.label} in {round_.title} report different durability settings.",
                    )
                )
    return found


def _data(runs: Sequence[RunInRound]) -> list[Caveat]:
    found = []
    unsized: dict[tuple[str, int], list[str]] = {}
    restored: list[str] = []
    for run in runs:
        measured = _measured_data(run)
        if measured is not None:
            found.append(measured)
            continue
        seeding = run.result.seeding
        seed = run.result.config.seed
        fresh = run.result.fresh
        if seed is None and fresh is not None:
            # A comparison seeded once and gave this run the data as seeded; its size is not in
            # the result.
            restored.append(run.label)
            continue
        if seeding is None or seed is None:
            found.append(
                Caveat(
                    "Data not fresh.",
                    f"{run.name} used data already in the database: its size and whether it was cached "
                    "were not recorded.",
                )
            )
            continue
        size = _database_bytes(run.result)
        memory = run.result.environment.memory_bytes
        if size is None or memory is None:
            rows = sum(int(table.rows) for table in seeding.tables.values())
            unsized.setdefault((sizes_words(run.result), rows), []).append(run.name)
            continue
        fits = "fits" if size < memory else "does not fit"
        text = (
            f"{run.name}'s database ({size / 2**20:,.0f} MiB) {fits} in the machine's memory "
            f"({memory / 2**30:,.1f} GiB)."
        )
        if size < memory:
            found.append(Caveat("Dataset in memory.", text + _LARGER))
        else:
            found.append(Caveat("Dataset larger than memory.", text))
    for (sizes, rows), names in unsized.items():
        who = "The run" if len(runs) == 1 else "Every run" if len(names) == len(runs) else ", ".join(names)
        found.append(
            Caveat(
                "Dataset in memory.",
                f"{who} used {sizes} ({rate(rows)} rows in "
                "all), loaded just before the run; the database size was not recorded, but data this small "
                "and this fresh is most likely served from memory." + _LARGER,
            )
        )
    if restored:
        found.append(
            Caveat(
                "Data restored.",
                f"{_names(list(dict.fromkeys(restored)))} started every run from the data as seeded, given "
                "back before the run; the results do not record its size, so whether it fits in memory "
                "is not shown here." + _LARGER,
            )
        )
    return found


def _measured_data(run: RunInRound) -> Caveat | None:
    """The data against memory as the run measured it (`storage`, and each level's reads), at its
    highest level that passed (else its last): None when the run measured nothing."""
    storage = run.result.storage or DatabaseSize()
    size = number(storage.size_bytes)
    levels = [level for level in run.result.levels if level.storage is not None]
    if size is None or not levels:
        return None
    passed = [level for level in levels if level.passed]
    level = max(passed, key=lambda lvl: lvl.offered_rps) if passed else levels[-1]
    reads = level.storage or LevelReads()
    cap = number(storage.memory_cap_bytes)
    memory = cap if cap is not None else run.result.environment.memory_bytes
    against = "its memory cap" if cap is not None else "the machine's memory"
    mib = size / 2**20
    text = (
        f"{run.name}'s data, {mib:,.1f} MiB on disk"
        if mib < 10
        else f"{run.name}'s data, {mib:,.0f} MiB on disk"
    )
    if memory:
        ratio = size / memory
        share_words = f"{ratio:.2g} x" if ratio >= 0.01 else "under 1 % of"
        text += f", is {share_words} {against} ({memory / 2**20:,.0f} MiB)"
    disk = number(reads.disk_bytes)
    share = number(reads.miss_share)
    at = f"at {rate(level.offered_rps)} req/s (level {level.number})"
    if disk is None:
        text += f"; what it read from disk {at} was not measured (its processes could not be read)."
    else:
        text += f"; {at} {disk / 2**20:,.1f} MiB came from disk"
        if (pages := number(reads.disk_share)) is not None:
            text += f" (at most {_percent(pages)} of the pages it read)"
        if share is not None:
            text += f" and {100 * share:.0f} % of its reads missed its {reads.cache or 'cache'}"
        text += "."
    from_disk = disk is not None and disk >= 2**20
    title = "Dataset read from disk." if from_disk else "Dataset in memory (measured)."
    return Caveat(title, text + ("" if from_disk else _LARGER))


def _percent(share: float) -> str:
    """A share as the data caveat writes it: 31 %, or under 1 % for a share that rounds to 0."""
    return f"{100 * share:.0f} %" if share >= 0.005 or share == 0 else "under 1 %"


_LARGER = (
    " A dataset larger than memory can change the order "
    '("Postgres vs MariaDB on two dedicated CPUs": at 20 M orders).'
)


def _database_bytes(result: RunResult) -> float | None:
    """The database's size on disk, where the run recorded it: in its seeding, its environment, or
    (results from before either) the result itself."""
    for value in (
        result.seeding.database_bytes if result.seeding else None,
        result.environment.data_size_bytes,
        result.data_size_bytes,
    ):
        found = number(value)
        if found is not None:
            return found
    return None


def _durability_of(result: RunResult) -> Any:
    """An engine's durability settings as reported (None when it described none)."""
    return result.engine.durability if result.engine else None


def _generator(runs: Sequence[RunInRound]) -> list[Caveat]:
    where = []
    flags = []
    for run in runs:
        flagged = [
            row.number for row in run.levels if any("generator fell behind" in flag for flag in row.flags)
        ]
        if flagged:
            where.append(f"level{'s' if len(flagged) > 1 else ''} {_listing(flagged)} of {run.name}")
        flags += [Caveat("Flag.", f"{run.name}: {flag}") for flag in run.result.flags]
        other = [
            f"level {row.number}: {flag}"
            for row in run.levels
            for flag in row.flags
            if "generator fell behind" not in flag
        ]
        if other:
            flags.append(Caveat("Flagged levels.", f"{run.name}: " + "; ".join(other) + "."))
    if where:
        flags.insert(
            0,
            Caveat(
                "Generator flagged.",
                f"At {_names(where)} the load generator fell behind its schedule: requests left late, so "
                "latency there includes the generator's own delay, and the service saw less than the "
                "offered rate at times.",
            ),
        )
    return flags


def _machine(runs: Sequence[RunInRound]) -> list[Caveat]:
    http = [run for run in runs if run.result.config.target == "http"]
    if not http:
        return []
    environment = http[0].result.environment
    cpus = environment.cpu_cores or environment.cpu_count
    cores = f"this machine's {plain(cpus)} CPUs" if cpus else "this machine's CPUs"
    return [
        Caveat(
            "One machine.",
            f"The load generator, the service and the database shared {cores}: the limit found is the "
            "machine's, not the database's alone. A database on its own machine is a different test.",
        )
    ]


def _pool_and_hold(runs: Sequence[RunInRound]) -> list[Caveat]:
    pools = sorted({pool for run in runs if (pool := run.result.config.pool_size) is not None})
    holds = sorted({hold for run in runs for hold in run.plan.holds()})
    found = []
    if pools:
        found.append(
            Caveat(
                "Other pool sizes.",
                f"{'The run' if len(runs) == 1 else 'Every run'} used a pool of "
                f"{' / '.join(plain(p) for p in pools)} connections; "
                "another pool size can change the order.",
            )
        )
    if holds and min(holds) < SHORT_HOLD_S:
        found.append(
            Caveat(
                "Short holds.",
                f"Each level was held {' / '.join(plain(h) for h in holds)} s (the published experiments "
                "hold 30 to 170 s): short holds miss slow effects such as checkpoints and cache turnover.",
            )
        )
    return found


def caveats(rounds: Sequence[Round]) -> list[Caveat]:
    """Everything the runs in `rounds` do not show, most important first."""
    runs = [run for round_ in rounds for run in round_.runs]
    return [
        *_one_run(rounds),
        *_spread(rounds),
        *_bounds(runs),
        *_step(rounds),
        *_think(rounds),
        *_spike(rounds),
        *_durability(rounds, runs),
        *_steal(runs),
        *_generator(runs),
        *_data(runs),
        *_machine(runs),
        *_pool_and_hold(runs),
    ]
