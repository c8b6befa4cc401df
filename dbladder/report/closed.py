"""The closed model ("Postgres vs MariaDB on two dedicated CPUs") as the reports read it: users plans, think
times, spike phases.

An open-model result climbs a ladder of arrival rates (`config.ladder`); a closed-model one runs
phases of users who send, think and send again (`config.users`, `model: "closed"`). Here a level
is a number of users, the rate is what those users achieved, and `offered_rps` is only what they
could have sent had every answer been instant (users / mean think time).

A spike is a plan whose phase with the most users is neither the first nor the last ("Postgres vs MariaDB on
two dedicated CPUs"'s
100 -> 3,000 -> 100): its figures are the phases before, at and after the peak, and
`spike.recovery_seconds`. The runner attaches a `spike` block to any three-phase closed run (with
a note when the plan is no spike), so the plan's shape decides, not the block's presence.

Everything here reads a typed result (`dbladder.result.run.RunResult`) and nothing else, so
`runs.py` and the reporters share it.
"""

from __future__ import annotations

import itertools

from ..result.level import Level
from ..result.run import Phase, RunResult, Users
from .figures import number, plain, rate

SPIKE_PHASES = ("before", "spike", "after")
DEFAULT_TOLERANCE = 0.2  # the runner's, when a spike block does not say


def is_closed(result: RunResult) -> bool:
    """Whether a result ran the closed model (users with think time) rather than a ladder."""
    return result.plan_kind == "users"


def plan(result: RunResult) -> Users:
    """The closed model's plan (`config.users`): phases, think_min, think_max; empty when open."""
    return result.config.users or Users()


def phases(result: RunResult) -> tuple[Phase, ...]:
    """The plan's phases, each with its users, ramp and hold."""
    return plan(result).phases


def user_counts(result: RunResult) -> list[int]:
    """The users of each phase, in order."""
    return [int(phase.users or 0) for phase in phases(result)]


def peak_index(counts: list[int]) -> int | None:
    """The phase with the most users (the first of equals), or None for an empty plan."""
    return max(range(len(counts)), key=lambda i: counts[i]) if counts else None


def is_spike(result: RunResult) -> bool:
    """Whether a closed result is a spike: its busiest phase has a phase before and after it."""
    counts = user_counts(result)
    peak = peak_index(counts)
    return is_closed(result) and peak is not None and 0 < peak < len(counts) - 1


def users_words(result: RunResult) -> str:
    """The plan in a few words: "20 to 80 users", "20 → 200 → 20 users", "80, 20, 40 users"."""
    counts = user_counts(result)
    if not counts:
        return "? users"
    shown = [rate(count) for count in counts]
    if is_spike(result):
        return " → ".join(shown) + " users"
    if len(counts) > 1 and all(a < b for a, b in itertools.pairwise(counts)):
        return f"{shown[0]} to {shown[-1]} users"
    return ", ".join(shown) + " users"


def think_times(result: RunResult) -> tuple[float, float] | None:
    """(shortest, longest) think time in seconds, or None when the result does not say."""
    low, high = number(plan(result).think_min), number(plan(result).think_max)
    return None if low is None or high is None else (low, high)


def mean_think(result: RunResult) -> float | None:
    """The mean think time in seconds (uniform between the two), or None."""
    think = think_times(result)
    return None if think is None else (think[0] + think[1]) / 2


def think_words(result: RunResult) -> str:
    """The think time as "Postgres vs MariaDB on two dedicated CPUs" says it: "50 to 150 ms"."""
    think = think_times(result)
    if think is None:
        return "? ms"
    low, high = (plain(round(value * 1000, 3)) for value in think)
    return f"{low} ms" if low == high else f"{low} to {high} ms"


def plan_words(result: RunResult) -> str:
    """Every phase of the plan written out, for the setup section."""
    found = phases(result)
    ramps = {plain(phase.ramp) for phase in found}
    hold_set = {plain(phase.hold) for phase in found}
    counts = ", ".join(rate(phase.users or 0) for phase in found)
    if len(ramps) == 1 and len(hold_set) == 1:
        ramp, hold = ramps.pop(), hold_set.pop()
        arrive = "at once" if ramp == "0" else f"over {ramp} s"
        return f"{counts} users; each level's users arrive {arrive}, then it is held {hold} s"
    return "; ".join(
        f"{rate(phase.users or 0)} users "
        + ("at once" if not phase.ramp else f"over {plain(phase.ramp)} s")
        + f", held {plain(phase.hold)} s"
        for phase in found
    )


def spike_levels(result: RunResult) -> list[tuple[str, Level]]:
    """A spike's finished levels as (phase name, level): before, spike, after; empty for no spike."""
    peak = peak_index(user_counts(result))
    if peak is None or not is_spike(result):
        return []
    levels = {level.index: level for level in result.levels}
    indexes = (peak - 1, peak, peak + 1)
    return [(name, levels[i]) for name, i in zip(SPIKE_PHASES, indexes, strict=True) if i in levels]


def spike_rate(result: RunResult) -> float | None:
    """Answers per second at the spike (the phase with the most users), or None before it finished."""
    found = dict(spike_levels(result)).get("spike")
    return None if found is None else float(found.achieved_rps)


def recovery_words(result: RunResult, short: bool = False) -> str:
    """How long p95 took to come back after the spike, from `spike.recovery_seconds`.

    "p95 back within 20 % after 3 s" or "p95 did not recover (...)"; `short` gives a table cell:
    "3 s", "did not recover", "not computed".
    """
    block = result.spike
    tolerance = number(block.tolerance) if block else None
    share = plain(round(100 * (DEFAULT_TOLERANCE if tolerance is None else tolerance), 3))
    seconds = number(block.recovery_seconds) if block else None
    if seconds is not None:
        return f"{plain(seconds)} s" if short else f"p95 back within {share} % after {plain(seconds)} s"
    if block is None or block.note or not block.to_json():
        note = (block.note if block else None) or "the run recorded no recovery time"
        return "not computed" if short else f"recovery not computed ({note})"
    return (
        "did not recover"
        if short
        else f"p95 did not recover: never back within {share} % of its pre-spike value"
    )


def recovery_recorded(result: RunResult) -> bool:
    """Whether the spike block says how long recovery took (or that it never came): no note."""
    block = result.spike
    return block is not None and "recovery_seconds" in block.to_json() and not block.note
