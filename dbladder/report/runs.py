"""Results grouped as the posts compare them: rounds (the same load), engines in a round, runs of an engine.

A report covers one result or several. Results with the same round key (preset, write share, ladder
or users plan, pass mark, data, target) are one round; within a round, results with the same label
(the result's `label` when a caller set one, else engine and version, plus the SQLite single-writer
switch) are the runs of one engine; each run's figures come from the plan it followed
(`dbladder.report.plan_views.view_of`). The result table of a comparison, one row per figure of a
round and one column per engine, is `result_table.py`.

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

from ..engine_registry import label_of, run_label
from ..result.interval import Doubt, ceiling_doubts
from ..result.level import Level
from ..result.run import RunResult, as_result
from ..result.verdict import AT_LEAST, BELOW, EXACT, MIN_RUNS, Figure, Verdict, compare
from .figures import rate
from .plan_views import PlanView, view_of

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
    label = label_of(name) + (f" {version.group(0).rstrip('.')}" if version else "")
    config = result.config
    label += run_label(config.engine_settings)
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
    it is. Its figures come from the plan it followed (`dbladder.report.plan_views.view_of`)."""

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
        return view_of(self.result)

    @property
    def levels(self) -> tuple[Level, ...]:
        return self.result.levels

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
        return self.plan.ceiling_users

    @property
    def headline(self) -> float | None:
        """The figure the result table compares: the ceiling, or a spike's rate at the spike."""
        return self.plan.headline

    @property
    def lower_bound(self) -> bool:
        """No level failed: the ceiling is where the ladder (or the run) ended, not the engine's limit."""
        return self.plan.lower_bound

    @property
    def resolution(self) -> float:
        """How finely the headline is known, as a share of it (`PlanView.resolution`)."""
        return self.plan.resolution

    @cached_property
    def doubts(self) -> list[Doubt]:
        """The levels its ceiling rests on whose p95 interval holds the pass mark (`ceiling_doubts`)."""
        mark = self.result.pass_mark
        return ceiling_doubts(self.levels, self.ceiling, mark.p95_ms, mark.max_fail_pct)

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
                held = any(doubt.held for doubt in run.doubts)
                failed = any(not doubt.held for doubt in run.doubts)
                found.append(Figure(headline, bound, resolution, held, failed))
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
    def plan(self) -> PlanView:
        """The plan the round's runs followed (the round key holds the plan: they all followed it),
        as its first run's view."""
        return self.runs[0].plan

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
        view_of(result).key(),
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
    return f"{name}: {writes}, {view_of(result).title()}"


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
            plan = view_of(result)
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
    holds = sorted(set(view_of(result).holds()))
    return (" / ".join(f"{hold:g}" for hold in holds) or "0") + " s holds"


def _distinguish(rounds: list[Round]) -> None:
    """Give rounds that would share a title the detail that sets them apart (pass mark, data, hold...)."""
    details = (
        lambda r: f"pass mark p95 < {r.pass_mark.p95_ms:g} ms, < {r.pass_mark.max_fail_pct:g} % failed",
        sizes_words,
        _hold_words,
        lambda r: f"target {r.config.target}",
        lambda r: view_of(r).detail(),
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


def verdict(a: Group, b: Group) -> Verdict:
    """Engine a against engine b by the verdict rule (dbladder.result.verdict.RULE)."""
    return compare(a.figures(), b.figures())


def doubt_words(best: Group, other: Group) -> str:
    """Why the order of two engines is not settled by their levels' p95 intervals, in a sentence
    (the levels of `best`'s runs held, of `other`'s failed, whose interval holds the mark); ""."""
    if best.figure is not None or other.figure is not None:  # another figure than the ceiling
        return ""
    parts = [
        f"{run.name}: {doubt.words}"
        for group, held in ((best, True), (other, False))
        for run in group.runs
        for doubt in run.doubts
        if doubt.held == held
    ]
    if not parts:
        return ""
    return " No winner can rest on a level whose p95 interval holds the pass mark (" + "; ".join(parts) + ")."


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
