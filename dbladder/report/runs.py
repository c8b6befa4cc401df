"""Results grouped as the posts compare them: rounds (the same load), engines in a round, runs of an engine.

A report covers one result or several. Results with the same round key (preset, write share,
ladder or users plan, pass mark, data, target) are one round; within a round, results with the
same label (`result["label"]` when a caller set one, else engine and version, plus the SQLite
single-writer switch) are the runs of one engine. The result table of "Postgres vs MariaDB on two dedicated
CPUs" is the model: one row
per figure of a round, one column per engine, every run's figure and the difference
(`comparison_table`, which the terminal prints and the reports show).

The figure a round compares (a run's `headline`): open model, the ceiling (offered rate of the
highest step held); closed model, the rate the users achieved at the highest users level held,
with a second row for the peak rate; a spike, the rate answered at the spike, with a second row
for how long p95 took to recover.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ..result.level import Level
from ..result.run import RunResult, as_result
from ..result.verdict import AT_LEAST, BELOW, EXACT, MIN_RUNS, Figure, Verdict, compare
from ..urls import KINDS
from . import closed
from .figures import rate
from .plan_views import PlanView, plan_of

ENGINE_NAMES = {name: kind.label for name, kind in KINDS.items()}
"""Engine name -> its label, as people write it (`dbladder.urls.EngineKind.label`)."""
FEW_RUNS = f"cannot tell from fewer than {MIN_RUNS} runs"

Results = Sequence[RunResult | Mapping[str, Any]]
"""Results as the report's entry points take them: typed, or result.json's data (read here once)."""


def engine_label(result: RunResult | Mapping[str, Any]) -> str:
    """What the comparison calls a run's engine: e.g. "PostgreSQL 15.20", "SQLite 3.54.1, one writer"."""
    result = as_result(result)
    if result.label:
        return str(result.label)
    name = result.engine_name
    version = re.match(r"[\d.]+", str((result.engine.server_version if result.engine else None) or ""))
    label = ENGINE_NAMES.get(name, name) + (f" {version.group(0).rstrip('.')}" if version else "")
    config = result.config
    if config.sqlite_writers:
        label += ", one writer"
    if config.target == "direct":
        label += ", direct"
    transport = result.transport
    if transport is not None and (transport.chosen or transport.added_latency_ms is not None):
        label += f", {transport.transport}"
        if transport.added_latency_ms is not None:
            label += f" + {transport.added_latency_ms:g} ms"
    return label


@dataclass(frozen=True)
class RunInRound:
    """One result as a run of an engine in a round: the typed result, and which run of its engine
    it is. Its figures come from the plan it followed (`plan_views.plan_of`)."""

    result: RunResult
    label: str
    number: int  # 1-based among the runs of this engine in this round
    runs_of_engine: int

    @property
    def name(self) -> str:
        """The engine label, with "run N" when the engine has several runs."""
        return self.label if self.runs_of_engine == 1 else f"{self.label}, run {self.number}"

    @cached_property
    def plan(self) -> PlanView:
        return plan_of(self.result)

    @property
    def levels(self) -> tuple[Level, ...]:
        return self.result.levels

    @property
    def closed(self) -> bool:
        """Users with think time ("Postgres vs MariaDB on two dedicated CPUs") rather than a ladder of
        arrival rates."""
        return self.plan.closed

    @property
    def spike(self) -> bool:
        return self.plan.spike

    @property
    def ceiling(self) -> float | None:
        """`ceiling_rps`: the offered rate of the step held, or (closed) the rate its users achieved."""
        value = self.result.ceiling_rps
        return None if value is None else float(value)

    @property
    def ceiling_users(self) -> int | None:
        """Closed model: the users of the highest level held; None when open or none held."""
        value = self.result.ceiling_users
        return int(value) if self.closed and isinstance(value, int | float) else None

    @property
    def headline(self) -> float | None:
        """The figure the result table compares: the ceiling, or a spike's rate at the spike."""
        return self.plan.headline

    @property
    def lower_bound(self) -> bool:
        """No level failed: the ceiling is where the ladder (or the run) ended, not the engine's limit."""
        return self.plan.lower_bound

    @property
    def searched(self) -> bool:
        """Whether the run was a ceiling search (probes at chosen rates) rather than a ladder."""
        return self.plan.searched

    @property
    def resolution(self) -> float:
        """How finely the headline is known, as a share of it (`PlanView.resolution`)."""
        return self.plan.resolution

    @property
    def first_failure(self) -> Level | None:
        return next((level for level in self.levels if not level.passed), None)

    @property
    def sort_value(self) -> float:
        """The headline for ordering: a run that held no level sorts below every run that held one."""
        headline = self.headline
        return headline if headline is not None else 0.0

    def x(self, level: Level) -> float:
        """Where a level sits on the plots' x axis: its users (closed) or its offered rate (open)."""
        return self.plan.x(level)

    @property
    def ceiling_x(self) -> float | None:
        """Where the plots mark the ceiling; None for a spike (its plan has no ceiling to climb to)."""
        return self.plan.ceiling_x


@dataclass
class Group:
    """The runs of one engine in one round, and the figure its median, lowest and highest are of."""

    label: str
    runs: list[RunInRound] = field(default_factory=list)
    # None: each run's headline (`sort_value`); else another figure (e.g. the peak rate).
    figure: Callable[[RunInRound], float | None] | None = None
    bounded: bool = True  # whether "no level failed" makes the figure a lower bound

    def value(self, run: RunInRound) -> float:
        """A run's figure; a run without one counts as 0, below every run that has one."""
        if self.figure is None:
            return run.sort_value
        found = self.figure(run)
        return 0.0 if found is None else found

    def of(self, figure: Callable[[RunInRound], float | None]) -> Group:
        """The same runs, compared by another figure (which is never a lower bound)."""
        return replace(self, figure=figure, bounded=False)

    @property
    def median(self) -> float:
        return float(statistics.median(self.value(run) for run in self.runs))

    @property
    def lowest(self) -> float:
        return min(self.value(run) for run in self.runs)

    @property
    def highest(self) -> float:
        return max(self.value(run) for run in self.runs)

    @property
    def lower_bound(self) -> bool:
        return self.bounded and any(run.lower_bound for run in self.runs)

    def figures(self) -> list[Figure]:
        """Each run's figure for the verdict rule (dbladder.result.verdict): its value, whether it
        is a bound, and its resolution (a ladder's step, a search's last bracket)."""
        found = []
        for run in self.runs:
            if self.figure is not None:
                found.append(Figure(self.value(run)))
                continue
            headline = run.headline
            resolution = run.resolution
            if headline is None:
                first = float(run.levels[0].offered_rps) if run.levels else 0.0
                found.append(Figure(first, BELOW, resolution))
            else:
                bound = AT_LEAST if self.bounded and run.lower_bound else EXACT
                found.append(Figure(headline, bound, resolution))
        return found


@dataclass
class Round:
    """Results that ran the same load: their engines side by side."""

    key: tuple[Any, ...]
    title: str
    step: float  # open: the ladder's step (a ceiling's precision); closed: 0
    start: float  # the first level's x: offered rate (open) or users (closed)
    groups: list[Group] = field(default_factory=list)

    @property
    def runs(self) -> list[RunInRound]:
        return [run for group in self.groups for run in group.runs]

    @property
    def closed(self) -> bool:
        return any(run.closed for run in self.runs)

    @property
    def spike(self) -> bool:
        return any(run.spike for run in self.runs)


def write_share(result: RunResult) -> float | None:
    """The share of the requests sent that were writes, from the workload's mix; None if unknown."""
    return result.workload.write_share if result.workload else None


def sizes_words(result: RunResult) -> str:
    """The data's size parameters in words: "100,000 products, 1,000,000 orders"."""
    data = result.workload.data if result.workload else None
    sizes = data.sizes if data else {}
    return ", ".join(f"{rate(count)} {name}" for name, count in (sizes or {}).items()) or "unknown sizes"


def round_key(result: RunResult) -> tuple[Any, ...]:
    """What must match for two results to be runs of the same round."""
    config = result.config
    workload = result.workload
    data = workload.data if workload else None
    sizes = (data.sizes if data else None) or {}
    mark = result.pass_mark
    return (
        workload.name if workload else None,
        config.preset,
        tuple(sorted(((workload.mix if workload else None) or {}).items())),
        plan_of(result).key(),
        (mark.p95_ms, mark.max_fail_pct),
        tuple(sorted(sizes.items())),
        config.target,
    )


def round_title(result: RunResult) -> str:
    """A round in words: "quick: 20 % writes, 500 to 2,000 req/s", "users-read: 5 % writes, 20 to 80
    users", "spike: 20 % writes, 20 → 200 → 20 users"."""
    share = write_share(result)
    writes = "reads only" if share == 0 else f"{100 * share:.0f} % writes" if share is not None else "?"
    workload = result.workload.name if result.workload else None
    name = result.config.preset or "custom"
    if workload and workload != "shop":
        name = f"{workload} {name}"
    return f"{name}: {writes}, {plan_of(result).title()}"


def _run_numbers(results: list[RunResult]) -> list[int]:
    """Each run's number: the `run` a comparison recorded when every run has a distinct one, else
    the order of appearance (bundles merged from two comparisons both have a run 1)."""
    recorded = [result.run for result in results]
    if all(isinstance(n, int) and n > 0 for n in recorded) and len(set(recorded)) == len(recorded):
        return [int(n) for n in recorded if isinstance(n, int)]
    return list(range(1, len(results) + 1))


def rounds_of(results: Results) -> list[Round]:
    """The results as rounds, each with its engines' runs, in the order they first appear."""
    rounds: dict[tuple[Any, ...], Round] = {}
    members: dict[tuple[Any, ...], dict[str, list[RunResult]]] = {}
    for result in map(as_result, results):
        key = round_key(result)
        if key not in rounds:
            plan = plan_of(result)
            rounds[key] = Round(key, round_title(result), plan.step, plan.start)
            members[key] = {}
        members[key].setdefault(engine_label(result), []).append(result)
    for key, by_label in members.items():
        for label, group_results in by_label.items():
            group = Group(label)
            group.runs = [
                RunInRound(result, label, number, len(group_results))
                for result, number in zip(group_results, _run_numbers(group_results), strict=True)
            ]
            rounds[key].groups.append(group)
    _distinguish(list(rounds.values()))
    return list(rounds.values())


def _hold_words(result: RunResult) -> str:
    holds = sorted(set(plan_of(result).holds()))
    return (" / ".join(f"{hold:g}" for hold in holds) or "0") + " s holds"


def _distinguish(rounds: list[Round]) -> None:
    """Give rounds that would share a title the detail that sets them apart (pass mark, data, hold...)."""
    details = (
        lambda r: f"pass mark p95 < {r.pass_mark.p95_ms:g} ms, < {r.pass_mark.max_fail_pct:g} % failed",
        sizes_words,
        _hold_words,
        lambda r: f"target {r.config.target}",
        lambda r: plan_of(r).detail(),
    )
    for detail in details:
        by_title: dict[str, list[Round]] = {}
        for round_ in rounds:
            by_title.setdefault(round_.title, []).append(round_)
        for clashing in by_title.values():
            words = [detail(round_.runs[0].result) for round_ in clashing]
            if len(clashing) > 1 and len(set(words)) > 1:
                for round_, word in zip(clashing, words, strict=True):
                    round_.title += f" ({word})"
    titles = [round_.title for round_ in rounds]
    for number, round_ in enumerate(rounds, start=1):
        if titles.count(round_.title) > 1:
            round_.title += f" (round {number})"


def ceiling_text(run: RunInRound) -> str:
    """A run's headline for a table (`PlanView.cell`): "2,000", "≥ 2,000" (no level failed), "< 500"
    (the first failed); a users round's rate, or "< 20 users"; a spike's rate at the spike, or "-"."""
    return run.plan.cell()


def _median(group: Group, unit: str = "") -> str:
    return f" (median {rate(group.median)}{unit})" if len(group.runs) > 1 else ""


def _users_held(run: RunInRound) -> str:
    """The users level a closed run held: "80 users", "≥ 80 users" (none failed)."""
    return ("≥ " if run.lower_bound else "") + f"{rate(run.ceiling_users or 0)} users"


def _closed_cell(group: Group) -> str:
    """A closed round's ceilings: "≥ 80 users: 796 / 790 req/s (median 793)" when every run held
    the same users level, else each run with its own: "796 req/s at 80 users / 395 req/s at 40 users"."""
    runs = group.runs
    held = {(run.ceiling_users, run.lower_bound) for run in runs}
    if len(held) == 1 and runs[0].ceiling is not None:
        figures = " / ".join(rate(run.ceiling or 0) for run in runs)
        return f"{_users_held(runs[0])}: {figures} req/s" + _median(group)
    texts = [
        ceiling_text(run) if run.ceiling is None else f"{rate(run.ceiling)} req/s at {_users_held(run)}"
        for run in runs
    ]
    held_any = any(run.ceiling is not None for run in runs)
    return " / ".join(texts) + (_median(group, " req/s") if held_any else "")


def group_cell(group: Group) -> str:
    """Every run's figure, and the median when there are several: "2,991 / 2,741 / 2,494 (median 2,741)"."""
    runs = group.runs
    if group.figure is None and runs and runs[0].closed and not runs[0].spike:
        return _closed_cell(group)
    if group.figure is None:
        texts = [ceiling_text(run) for run in runs]
    else:
        texts = [rate(value) if (value := group.figure(run)) is not None else "-" for run in runs]
    return " / ".join(texts) + " req/s" + _median(group)


def recovery_cell(group: Group) -> str:
    """A spike's recovery per run: "2 s / 3 s / did not recover"."""
    return " / ".join(closed.recovery_words(run.result, short=True) for run in group.runs)


def verdict(a: Group, b: Group) -> Verdict:
    """Engine a against engine b by the verdict rule (dbladder.result.verdict.RULE)."""
    return compare(a.figures(), b.figures())


def interval_words(found: Verdict) -> str:
    """The 95 % interval of the first engine's figure against the second's: "-4 to +6 %"."""
    if found.low is None or found.high is None:
        return ""
    return f"{100 * (found.low - 1):+.0f} to {100 * (found.high - 1):+.0f} %"


def few_runs(groups: Sequence[Group]) -> bool:
    """Whether any engine compared has fewer runs than the rule needs to name a winner."""
    return any(len(group.runs) < MIN_RUNS for group in groups)


def single_run(groups: Sequence[Group]) -> bool:
    """Whether any engine compared has only one run: its spread, and so the noise, is unknown."""
    return any(len(group.runs) == 1 for group in groups)


def _raw_gain(best: Group, other: Group) -> str:
    """How much higher the best engine's median is: "+100 %"."""
    return f"+{100 * (best.median - other.median) / other.median:.0f} %"


def _behind(best: Group, other: Group) -> str:
    """How far another engine's median is below the best's, on the best's base: "-50 %"."""
    return f"-{100 * (best.median - other.median) / best.median:.0f} %"


def _top(group: Group) -> str:
    """What holding everything means for a group's runs: "every probe" (a search), "the top step"."""
    searched = [run.plan.top_words for run in group.runs if run.searched]
    return searched[0] if searched else group.runs[0].plan.top_words


def _all_held(group: Group) -> bool:
    return group.bounded and all(run.lower_bound for run in group.runs)


def pair_words(best: Group, other: Group, users: bool, pair: bool) -> str:
    """The difference column's words for one engine against the best one (see `difference`)."""
    found = verdict(best, other)
    name = "" if pair else f"{other.label}: "
    if found.outcome == "bounds":
        if _all_held(best) and _all_held(other):
            same = "both held every level" if users else f"both held {_top(best)}"
            return same if pair else f"{other.label}: {same}"
        if best.median <= 0 and other.median <= 0:
            return f"{name}neither held a level"
        group = other if other.lower_bound else best
        held = sum(run.lower_bound for run in group.runs)
        top = "every level" if users else _top(group)
        return (
            f"{name}cannot tell: {group.label} held {top} in {held} of {len(group.runs)} runs, "
            "so its limit lies higher"
        )
    if found.outcome == "too few runs":
        if other.median <= 0:
            return f"only {best.label} held a level" if pair else f"{other.label}: none"
        return f"{best.label} {_raw_gain(best, other)}" if pair else f"{other.label} {_behind(best, other)}"
    if found.outcome == "same":
        return f"{name}about the same ({interval_words(found)})"
    if found.outcome == "unclear":
        return f"{name}cannot tell apart ({interval_words(found)})"
    at_least = "at least " if found.at_least else ""
    if other.median <= 0 and not pair:
        return f"{other.label}: none"
    if other.median <= 0:
        return f"only {best.label} held a level"
    # The size of the gap is said by the medians, as the cells show them; the rule said whether.
    if pair:
        return f"{best.label} {at_least}{_raw_gain(best, other)}"
    return f"{other.label} {at_least}{_behind(best, other)}"


def difference(groups: Sequence[Group], step: float = 0.0) -> str:
    """The comparison table's last column: "PostgreSQL +21 %", "about the same (-4 to +6 %)", ...

    Each engine against the best by the verdict rule (dbladder.result.verdict): a winner only
    when the rule names one, "at least" when the winner's figure is a bound (it held every
    level), "cannot tell apart" with the 95 % interval when the rule names none and the interval
    is wide. With fewer than 3 runs of any engine the column says it cannot tell, with the raw
    difference of the medians in brackets. `step` is kept for callers; the runs carry their own
    resolution.
    """
    if len(groups) < 2:
        return ""
    ordered = sorted(groups, key=lambda group: group.median, reverse=True)
    best = ordered[0]
    # Closed model: users who held every level sent what their think time let them, so the rates
    # at the top say nothing about either engine's limit.
    users = any(run.closed for run in best.runs)
    pair = len(groups) == 2
    parts = [pair_words(best, other, users, pair) for other in ordered[1:]]
    if pair:
        text = parts[0]
    elif all(
        part.endswith(("both held the top step", "both held every level", "both held every probe"))
        for part in parts
    ):
        # Every engine held the top: there is no best, and the ladder did not find any limit.
        text = "all held every level" if users else f"all held {_top(best)}"
    else:
        text = f"best: {best.label}; " + "; ".join(parts)
    if text.startswith(("all held", "both held")):
        return text  # no limit was found: more runs would not find one either
    return f"{FEW_RUNS} ({text})" if few_runs(groups) else text


@dataclass(frozen=True)
class Row:
    """One row of the result table: one figure of a round, each engine's runs, the difference."""

    test: str
    runs: str  # runs per engine: "3", or "3 / 1" when the engines ran a different number
    cells: dict[str, str]  # by engine label; an engine not in the round has none
    difference: str  # "" when one engine, or the figure is not compared


def _peak(run: RunInRound) -> float | None:
    value = run.result.peak_rps
    return None if value is None else float(value)


def round_rows(round_: Round) -> list[Row]:
    """The rows of one round: its headline, and for a closed round the peak (or a spike's recovery)."""
    runs = " / ".join(str(n) for n in sorted({len(group.runs) for group in round_.groups}))
    groups = round_.groups
    rows = [
        Row(round_.title, runs, {g.label: group_cell(g) for g in groups}, difference(groups, round_.step))
    ]
    if round_.spike:
        # Seconds to recover are not a rate to rank: each engine's are shown, not compared.
        cells = {group.label: recovery_cell(group) for group in groups}
        rows.append(Row(f"{round_.title}, p95 recovery", runs, cells, ""))
    elif round_.closed:
        peaks = [group.of(_peak) for group in groups]
        cells = {group.label: group_cell(group) for group in peaks}
        rows.append(Row(f"{round_.title}, peak", runs, cells, difference(peaks, round_.step)))
    return rows


def engine_labels(rounds: Sequence[Round]) -> list[str]:
    """Every engine label of the rounds, in the order they first appear: the table's columns."""
    return list(dict.fromkeys(group.label for round_ in rounds for group in round_.groups))


def comparison_table(results: Results) -> list[list[str]]:
    """The "Result first" table of "Postgres vs MariaDB on two dedicated CPUs", of results, as rows of text;
    the first row is the header.

    Header: test, runs, one column per engine, difference. One row per figure of each round (a
    closed round adds its peak, a spike its recovery): each engine's runs' figures (with their
    median when there are several) and the difference, "-" where none applies (one engine, or a
    figure that is not compared). The reports show the same rows.
    """
    rounds = rounds_of(results)
    labels = engine_labels(rounds)
    table = [["test", "runs", *labels, "difference"]]
    for round_ in rounds:
        for row in round_rows(round_):
            table.append(
                [row.test, row.runs, *(row.cells.get(label, "-") for label in labels), row.difference or "-"]
            )
    return table
