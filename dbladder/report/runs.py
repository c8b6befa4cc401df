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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..result.verdict import AT_LEAST, BELOW, EXACT, MIN_RUNS, Figure, Verdict, compare
from . import closed
from .figures import rate

ENGINE_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "mariadb": "MariaDB"}
FEW_RUNS = f"cannot tell from fewer than {MIN_RUNS} runs"


def engine_label(result: dict[str, Any]) -> str:
    """What the comparison calls a run's engine: e.g. "PostgreSQL 15.20", "SQLite 3.54.1, one writer"."""
    if result.get("label"):
        return str(result["label"])
    engine = result.get("engine") or {}
    name = engine.get("engine") or str(result.get("config", {}).get("db_url", "?")).split(":", 1)[0]
    version = re.match(r"[\d.]+", str(engine.get("server_version", "")))
    label = ENGINE_NAMES.get(name, name) + (f" {version.group(0).rstrip('.')}" if version else "")
    config = result.get("config", {})
    if config.get("sqlite_writers"):
        label += ", one writer"
    if config.get("target") == "direct":
        label += ", direct"
    transport = result.get("transport") or {}
    if transport.get("chosen") or transport.get("added_latency_ms") is not None:
        label += f", {transport.get('transport')}"
        if transport.get("added_latency_ms") is not None:
            label += f" + {transport['added_latency_ms']:g} ms"
    return label


@dataclass(frozen=True)
class RunView:
    """One result as a run of an engine in a round."""

    result: dict[str, Any]
    label: str
    number: int  # 1-based among the runs of this engine in this round
    runs_of_engine: int

    @property
    def name(self) -> str:
        """The engine label, with "run N" when the engine has several runs."""
        return self.label if self.runs_of_engine == 1 else f"{self.label}, run {self.number}"

    @property
    def levels(self) -> list[dict[str, Any]]:
        return list(self.result.get("levels", []))

    @property
    def closed(self) -> bool:
        """Users with think time ("Postgres vs MariaDB on two dedicated CPUs") rather than a ladder of
        arrival rates."""
        return closed.is_closed(self.result)

    @property
    def spike(self) -> bool:
        return closed.is_spike(self.result)

    @property
    def ceiling(self) -> float | None:
        """`ceiling_rps`: the offered rate of the step held, or (closed) the rate its users achieved."""
        value = self.result.get("ceiling_rps")
        return None if value is None else float(value)

    @property
    def ceiling_users(self) -> int | None:
        """Closed model: the users of the highest level held; None when open or none held."""
        value = self.result.get("ceiling_users")
        return int(value) if self.closed and isinstance(value, int | float) else None

    @property
    def headline(self) -> float | None:
        """The figure the result table compares: the ceiling, or a spike's rate at the spike.

        A spike's ceiling would be the phase after the spike (the last of the unbroken passes),
        which says nothing about the spike itself.
        """
        return closed.spike_rate(self.result) if self.spike else self.ceiling

    @property
    def lower_bound(self) -> bool:
        """No level failed: the ceiling is where the ladder (or the run) ended, not the engine's limit."""
        levels = self.levels
        return not self.spike and bool(levels) and all(level["passed"] for level in levels)

    @property
    def searched(self) -> bool:
        """Whether the run was a ceiling search (probes at chosen rates) rather than a ladder."""
        return bool(self.result.get("search"))

    @property
    def resolution(self) -> float:
        """How finely the headline is known, as a share of it: the true figure lies in
        [headline, headline * (1 + resolution)). A ladder's step over the ceiling, a search's
        bracket (the lowest rate failed over the highest held); 0 for a rate the users achieved."""
        if self.spike or self.closed:
            return 0.0
        headline = self.headline
        search = self.result.get("search") or {}
        if search:
            held, failed = search.get("held_rps"), search.get("failed_rps")
            if held and failed:
                return float(failed) / float(held) - 1
            return float(search.get("resolution") or 0.0)
        step = float((self.result.get("config", {}).get("ladder") or {}).get("step") or 0.0)
        return step / headline if headline else 0.0

    @property
    def first_failure(self) -> dict[str, Any] | None:
        return next((level for level in self.levels if not level["passed"]), None)

    @property
    def sort_value(self) -> float:
        """The headline for ordering: a run that held no level sorts below every run that held one."""
        headline = self.headline
        return headline if headline is not None else 0.0

    def x(self, level: dict[str, Any]) -> float:
        """Where a level sits on the plots' x axis: its users (closed) or its offered rate (open)."""
        return float(level["users"]) if self.closed and "users" in level else float(level["offered_rps"])

    @property
    def ceiling_x(self) -> float | None:
        """Where the plots mark the ceiling; None for a spike (its plan has no ceiling to climb to)."""
        if self.spike:
            return None
        if self.closed:
            users = self.ceiling_users
            return None if users is None else float(users)
        return self.ceiling


@dataclass
class Group:
    """The runs of one engine in one round, and the figure its median, lowest and highest are of."""

    label: str
    runs: list[RunView] = field(default_factory=list)
    # None: each run's headline (`sort_value`); else another figure (e.g. the peak rate).
    figure: Callable[[RunView], float | None] | None = None
    bounded: bool = True  # whether "no level failed" makes the figure a lower bound

    def value(self, run: RunView) -> float:
        """A run's figure; a run without one counts as 0, below every run that has one."""
        if self.figure is None:
            return run.sort_value
        found = self.figure(run)
        return 0.0 if found is None else found

    def of(self, figure: Callable[[RunView], float | None]) -> Group:
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
                first = run.levels[0] if run.levels else {}
                found.append(Figure(float(first.get("offered_rps", 0.0)), BELOW, resolution))
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
    def runs(self) -> list[RunView]:
        return [run for group in self.groups for run in group.runs]

    @property
    def closed(self) -> bool:
        return any(run.closed for run in self.runs)

    @property
    def spike(self) -> bool:
        return any(run.spike for run in self.runs)


def workload_of(result: dict[str, Any]) -> dict[str, Any]:
    """The result's workload block (name, operations, writes, mix, data), empty when it has none."""
    workload: dict[str, Any] = result.get("workload") or {}
    return workload


def write_share(result: dict[str, Any]) -> float | None:
    """The share of the requests sent that were writes, from the workload's mix; None if unknown."""
    workload = workload_of(result)
    mix = workload.get("mix")
    if not isinstance(mix, dict):
        return None
    return round(sum(share for name, share in mix.items() if name in workload.get("writes", ())), 6)


def sizes_words(result: dict[str, Any]) -> str:
    """The data's size parameters in words: "100,000 products, 1,000,000 orders"."""
    sizes = (workload_of(result).get("data") or {}).get("sizes") or {}
    return ", ".join(f"{rate(count)} {name}" for name, count in sizes.items()) or "unknown sizes"


def round_key(result: dict[str, Any]) -> tuple[Any, ...]:
    """What must match for two results to be runs of the same round."""
    config = result.get("config", {})
    workload = workload_of(result)
    sizes = (workload.get("data") or {}).get("sizes") or {}
    mark = result.get("pass_mark", {})
    if closed.is_closed(result):
        plan = closed.plan(result)
        phases = tuple((p.get("users"), p.get("ramp"), p.get("hold")) for p in closed.phases(result))
        load: tuple[Any, ...] = ("users", phases, plan.get("think_min"), plan.get("think_max"))
    elif config.get("search"):
        search = config["search"]
        load = ("search", *(search.get(name) for name in ("start", "factor", "resolution", "hold", "warmup")))
    else:
        ladder = config.get("ladder") or {}
        load = tuple(ladder.get(name) for name in ("start", "step", "steps", "hold", "warmup"))
    return (
        workload.get("name"),
        config.get("preset"),
        tuple(sorted((workload.get("mix") or {}).items())),
        load,
        (mark.get("p95_ms"), mark.get("max_fail_pct")),
        tuple(sorted(sizes.items())),
        config.get("target"),
    )


def round_title(result: dict[str, Any]) -> str:
    """A round in words: "quick: 20 % writes, 500 to 2,000 req/s", "users-read: 5 % writes, 20 to 80
    users", "spike: 20 % writes, 20 → 200 → 20 users"."""
    config = result.get("config", {})
    share = write_share(result)
    writes = "reads only" if share == 0 else f"{100 * share:.0f} % writes" if share is not None else "?"
    workload = workload_of(result).get("name")
    name = config.get("preset") or "custom"
    if workload and workload != "shop":
        name = f"{workload} {name}"
    if closed.is_closed(result):
        return f"{name}: {writes}, {closed.users_words(result)}"
    if config.get("search"):
        search = config["search"]
        return f"{name}: {writes}, ceiling search from {rate(search.get('start', 0))} req/s"
    ladder = config.get("ladder") or {}
    start, step, steps = ladder.get("start", 0), ladder.get("step", 0), ladder.get("steps", 1)
    top = start + step * (steps - 1)
    return f"{name}: {writes}, {rate(start)} to {rate(top)} req/s"


def _run_numbers(results: list[dict[str, Any]]) -> list[int]:
    """Each run's number: the `run` a comparison recorded when every run has a distinct one, else
    the order of appearance (bundles merged from two comparisons both have a run 1)."""
    recorded = [result.get("run") for result in results]
    if all(isinstance(n, int) and n > 0 for n in recorded) and len(set(recorded)) == len(recorded):
        return [int(n) for n in recorded if isinstance(n, int)]
    return list(range(1, len(results) + 1))


def rounds_of(results: Sequence[dict[str, Any]]) -> list[Round]:
    """The results as rounds, each with its engines' runs, in the order they first appear."""
    rounds: dict[tuple[Any, ...], Round] = {}
    members: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = {}
    for result in results:
        key = round_key(result)
        if key not in rounds:
            if closed.is_closed(result):
                counts = closed.user_counts(result)
                rounds[key] = Round(key, round_title(result), 0.0, float(counts[0] if counts else 0))
            else:
                ladder = result.get("config", {}).get("ladder") or {}
                rounds[key] = Round(key, round_title(result), ladder.get("step", 0), ladder.get("start", 0))
            members[key] = {}
        members[key].setdefault(engine_label(result), []).append(result)
    for key, by_label in members.items():
        for label, group_results in by_label.items():
            group = Group(label)
            group.runs = [
                RunView(result, label, number, len(group_results))
                for result, number in zip(group_results, _run_numbers(group_results), strict=True)
            ]
            rounds[key].groups.append(group)
    _distinguish(list(rounds.values()))
    return list(rounds.values())


def _hold_words(result: dict[str, Any]) -> str:
    if closed.is_closed(result):
        return " / ".join(f"{hold:g}" for hold in sorted(set(closed.holds(result)))) + " s holds"
    return f"{(result['config'].get('ladder') or {}).get('hold', 0):g} s holds"


def _distinguish(rounds: list[Round]) -> None:
    """Give rounds that would share a title the detail that sets them apart (pass mark, data, hold...)."""
    details = (
        lambda r: (
            f"pass mark p95 < {r.get('pass_mark', {}).get('p95_ms', '?'):g} ms, "
            f"< {r.get('pass_mark', {}).get('max_fail_pct', '?'):g} % failed"
        ),
        sizes_words,
        _hold_words,
        lambda r: f"target {r['config'].get('target')}",
        lambda r: f"think {closed.think_words(r)}" if closed.is_closed(r) else "",
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


def ceiling_text(run: RunView) -> str:
    """A run's headline for a table: "2,000", "≥ 2,000" (no level failed) or "< 500" (the first failed).

    Closed model: the rate only (the users held are said beside it, `group_cell`), or "< 20 users";
    a spike: the rate at the spike, or "-" when the spike did not finish.
    """
    if run.spike:
        return "-" if run.headline is None else rate(run.headline)
    if run.closed and run.ceiling is None:
        return f"< {rate(run.levels[0]['users'])} users" if run.levels else "no level"
    if run.ceiling is None:
        return f"< {rate(run.levels[0]['offered_rps'])}" if run.levels else "no level"
    return ("≥ " if run.lower_bound and not run.closed else "") + rate(run.ceiling)


def _median(group: Group, unit: str = "") -> str:
    return f" (median {rate(group.median)}{unit})" if len(group.runs) > 1 else ""


def _users_held(run: RunView) -> str:
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
    return "every probe" if any(run.searched for run in group.runs) else "the top step"


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


def _peak(run: RunView) -> float | None:
    value = run.result.get("peak_rps")
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


def comparison_table(results: Sequence[dict[str, Any]]) -> list[list[str]]:
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
