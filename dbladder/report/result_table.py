"""The result table of a comparison: one row per figure of a round, one column per engine.

The table of "Postgres vs MariaDB on two dedicated CPUs" is the model: each engine's runs' figures
(with their median when there are several) and the difference, judged by the verdict rule
(`dbladder.result.verdict`). The terminal prints it (`comparison_table`) and the reports show the
same rows (`round_rows`). A round's runs and groups come from `runs.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .figures import rate
from .plan_views.ladder_view import PEAK_ROW, RECOVERY_ROW
from .runs import FEW_RUNS, Group, Results, Round, RunInRound, few_runs, interval_words, rounds_of, verdict


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
    if group.figure is None and runs and runs[0].plan.names_users_held:
        return _closed_cell(group)
    if group.figure is None:
        texts = [ceiling_text(run) for run in runs]
    else:
        texts = [rate(value) if (value := group.figure(run)) is not None else "-" for run in runs]
    return " / ".join(texts) + " req/s" + _median(group)


def recovery_cell(group: Group) -> str:
    """A spike's recovery per run: "2 s / 3 s / did not recover"."""
    return " / ".join(run.plan.recovery_words(short=True) for run in group.runs)


def _raw_gain(best: Group, other: Group) -> str:
    """How much higher the best engine's median is: "+100 %"."""
    return f"+{100 * (best.median - other.median) / other.median:.0f} %"


def _behind(best: Group, other: Group) -> str:
    """How far another engine's median is below the best's, on the best's base: "-50 %"."""
    return f"-{100 * (best.median - other.median) / best.median:.0f} %"


def _top(group: Group) -> str:
    """What holding everything means for a group's runs: "every probe" (a search), "the top step"
    (a ladder), "every level" (users)."""
    return group.runs[0].plan.top_words


def _all_held(group: Group) -> bool:
    return group.bounded and all(run.lower_bound for run in group.runs)


def pair_words(best: Group, other: Group, pair: bool) -> str:
    """The difference column's words for one engine against the best one (see `difference`)."""
    found = verdict(best, other)
    name = "" if pair else f"{other.label}: "
    if found.outcome == "bounds":
        if _all_held(best) and _all_held(other):
            same = f"both held {_top(best)}"
            return same if pair else f"{other.label}: {same}"
        if best.median <= 0 and other.median <= 0:
            return f"{name}neither held a level"
        group = other if other.lower_bound else best
        held = sum(run.lower_bound for run in group.runs)
        top = _top(group)
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
    if found.outcome == "overlap":
        return f"{name}cannot tell: a level's p95 interval holds the pass mark"
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
    # Users who held every level sent what their think time let them, so the rates at the top say
    # nothing about either engine's limit: their plan's top is "every level".
    pair = len(groups) == 2
    parts = [pair_words(best, other, pair) for other in ordered[1:]]
    if pair:
        text = parts[0]
    elif all(
        part.endswith(("both held the top step", "both held every level", "both held every probe"))
        for part in parts
    ):
        # Every engine held the top: there is no best, and the ladder did not find any limit.
        text = f"all held {_top(best)}"
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
    second = round_.plan.second_row
    if second == RECOVERY_ROW:
        # Seconds to recover are not a rate to rank: each engine's are shown, not compared.
        cells = {group.label: recovery_cell(group) for group in groups}
        rows.append(Row(f"{round_.title}, {second}", runs, cells, ""))
    elif second == PEAK_ROW:
        peaks = [group.of(_peak) for group in groups]
        cells = {group.label: group_cell(group) for group in peaks}
        rows.append(Row(f"{round_.title}, {second}", runs, cells, difference(peaks, round_.step)))
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
