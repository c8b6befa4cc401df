"""Results grouped as the posts compare them: rounds (the same load), engines in a round, runs of an engine.

A report covers one result or several. Results with the same round key (preset, write share,
ladder, pass mark, data, target) are one round; within a round, results with the same label
(`result["label"]` when a caller set one, else engine and version, plus the SQLite single-writer
switch) are the runs of one engine. Seed 001's result table is the model: one row per round,
one column per engine, every run's ceiling and the difference.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .figures import rate

ENGINE_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "mariadb": "MariaDB"}


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
    def ceiling(self) -> float | None:
        value = self.result.get("ceiling_rps")
        return None if value is None else float(value)

    @property
    def lower_bound(self) -> bool:
        """No level failed: the ceiling is where the ladder (or the run) ended, not the engine's limit."""
        levels = self.levels
        return bool(levels) and all(level["passed"] for level in levels)

    @property
    def first_failure(self) -> dict[str, Any] | None:
        return next((level for level in self.levels if not level["passed"]), None)

    @property
    def sort_value(self) -> float:
        """The ceiling for ordering: a run that held no level sorts below every run that held one."""
        return self.ceiling if self.ceiling is not None else 0.0


@dataclass
class Group:
    """The runs of one engine in one round."""

    label: str
    runs: list[RunView] = field(default_factory=list)

    @property
    def median(self) -> float:
        return float(statistics.median(run.sort_value for run in self.runs))

    @property
    def lowest(self) -> float:
        return min(run.sort_value for run in self.runs)

    @property
    def highest(self) -> float:
        return max(run.sort_value for run in self.runs)

    @property
    def lower_bound(self) -> bool:
        return any(run.lower_bound for run in self.runs)


@dataclass
class Round:
    """Results that ran the same load: their engines side by side."""

    key: tuple[Any, ...]
    title: str
    step: float
    start: float
    groups: list[Group] = field(default_factory=list)

    @property
    def runs(self) -> list[RunView]:
        return [run for group in self.groups for run in group.runs]


def round_key(result: dict[str, Any]) -> tuple[Any, ...]:
    """What must match for two results to be runs of the same round."""
    config = result.get("config", {})
    ladder = config.get("ladder", {})
    seed = config.get("seed") or {}
    mark = result.get("pass_mark", {})
    return (
        config.get("preset"),
        config.get("write_share"),
        tuple(ladder.get(name) for name in ("start", "step", "steps", "hold", "warmup")),
        (mark.get("p95_ms"), mark.get("max_fail_pct")),
        (seed.get("products"), seed.get("orders")),
        config.get("target"),
    )


def round_title(result: dict[str, Any]) -> str:
    """A round in words: "quick: 20 % writes, 500 to 2,000 req/s"."""
    config = result.get("config", {})
    ladder = config.get("ladder", {})
    start, step, steps = ladder.get("start", 0), ladder.get("step", 0), ladder.get("steps", 1)
    top = start + step * (steps - 1)
    share = config.get("write_share")
    writes = "reads only" if share == 0 else f"{100 * share:.0f} % writes" if share is not None else "?"
    return f"{config.get('preset') or 'custom'}: {writes}, {rate(start)} to {rate(top)} req/s"


def rounds_of(results: Sequence[dict[str, Any]]) -> list[Round]:
    """The results as rounds, each with its engines' runs, in the order they first appear."""
    rounds: dict[tuple[Any, ...], Round] = {}
    members: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = {}
    for result in results:
        key = round_key(result)
        if key not in rounds:
            ladder = result.get("config", {}).get("ladder", {})
            rounds[key] = Round(key, round_title(result), ladder.get("step", 0), ladder.get("start", 0))
            members[key] = {}
        members[key].setdefault(engine_label(result), []).append(result)
    for key, by_label in members.items():
        for label, group_results in by_label.items():
            group = Group(label)
            group.runs = [
                RunView(result, label, number, len(group_results))
                for number, result in enumerate(group_results, start=1)
            ]
            rounds[key].groups.append(group)
    _distinguish(list(rounds.values()))
    return list(rounds.values())


def _distinguish(rounds: list[Round]) -> None:
    """Give rounds that would share a title the detail that sets them apart (pass mark, data, hold...)."""
    details = (
        lambda r: (
            f"pass mark p95 < {r.get('pass_mark', {}).get('p95_ms', '?'):g} ms, "
            f"< {r.get('pass_mark', {}).get('max_fail_pct', '?'):g} % failed"
        ),
        lambda r: f"{rate((r['config'].get('seed') or {}).get('orders', 0))} orders",
        lambda r: f"{r['config'].get('ladder', {}).get('hold', 0):g} s holds",
        lambda r: f"target {r['config'].get('target')}",
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
    """A run's ceiling for a table: "2,000", "≥ 2,000" (no level failed) or "< 500" (the first failed)."""
    if run.ceiling is None:
        return f"< {rate(run.levels[0]['offered_rps'])}" if run.levels else "no level"
    return ("≥ " if run.lower_bound else "") + rate(run.ceiling)


def group_cell(group: Group) -> str:
    """Every run's ceiling, and the median when there are several: "2,991 / 2,741 / 2,494 (median 2,741)"."""
    cell = " / ".join(ceiling_text(run) for run in group.runs) + " req/s"
    if len(group.runs) > 1:
        cell += f" (median {rate(group.median)})"
    return cell


def level(a: Group, b: Group, step: float) -> bool:
    """Whether two engines ended level: medians less than a step apart, or runs that overlap."""
    gap = abs(a.median - b.median)
    if gap < max(step, 1e-9):
        return True
    high, low = (a, b) if a.median > b.median else (b, a)
    return high.lowest <= low.highest


def difference(groups: Sequence[Group], step: float) -> str:
    """The comparison table's last column: "about the same", "PostgreSQL +21 %", ..."""
    if len(groups) < 2:
        return ""
    ordered = sorted(groups, key=lambda group: group.median, reverse=True)
    best = ordered[0]
    parts = []
    for other in ordered[1:]:
        if best.lower_bound and other.lower_bound and best.median == other.median:
            same = "both held the top step"
            parts.append(same if len(groups) == 2 else f"{other.label}: {same}")
        elif level(best, other, step):
            parts.append("about the same" if len(groups) == 2 else f"{other.label}: about the same")
        elif other.median <= 0:
            parts.append(f"only {best.label} held a level" if len(groups) == 2 else f"{other.label}: none")
        elif len(groups) == 2:
            gain = 100 * (best.median - other.median) / other.median
            parts.append(f"{best.label} +{gain:.0f} %" + (" or more" if best.lower_bound else ""))
        else:
            # Against the best, so every engine's figure shares one base.
            parts.append(f"{other.label} -{100 * (best.median - other.median) / best.median:.0f} %")
    return "; ".join(parts) if len(groups) == 2 else f"best: {best.label}; " + "; ".join(parts)


def run_verdict(run: RunView) -> str:
    """One run in a sentence: what it held, and why the next level failed."""
    failed = run.first_failure
    if not run.levels:
        return f"{run.name} finished no level."
    if failed is None:
        top = run.levels[-1]["offered_rps"]
        return (
            f"{run.name} held every level up to {rate(top)} req/s, the last one climbed: "
            "no level failed, so its limit was not reached."
        )
    why = "; ".join(failed["reasons"]) or "it failed"
    if run.ceiling is None:
        return f"{run.name} held no level: the first, {rate(failed['offered_rps'])} req/s, failed ({why})."
    return (
        f"{run.name} held {rate(run.ceiling)} req/s; the next level, "
        f"{rate(failed['offered_rps'])} req/s, failed ({why})."
    )


def round_verdict(round_: Round) -> list[str]:
    """The verdict of a round in sentences: each engine against the best one."""
    if len(round_.groups) == 1:
        return [run_verdict(run) for run in round_.runs]
    ordered = sorted(round_.groups, key=lambda group: group.median, reverse=True)
    best = ordered[0]
    sentences = []
    for other in ordered[1:]:
        if best.lower_bound and other.lower_bound and best.median == other.median:
            sentences.append(
                f"{best.label} and {other.label} both held the top of the ladder "
                f"({rate(best.median)} req/s): neither limit was reached; climb higher to separate them."
            )
        elif best.median == other.median:
            sentences.append(f"{best.label} and {other.label} ended level at {rate(best.median)} req/s.")
        elif level(best, other, round_.step):
            sentences.append(
                f"{best.label} is ahead by its median ({rate(best.median)} against "
                f"{rate(other.median)} req/s), but the runs overlap: treat it as level."
            )
        elif other.median <= 0:
            sentences.append(f"{best.label} held {rate(best.median)} req/s; {other.label} held no level.")
        else:
            gain = 100 * (best.median - other.median) / other.median
            sentences.append(
                f"{best.label} held {gain:.0f} % more than {other.label} "
                f"({rate(best.median)} against {rate(other.median)} req/s"
                + (", and its own limit lies higher)." if best.lower_bound else ").")
            )
    return sentences
