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

Everything here reads a result dict and nothing else, so `runs.py` and the reporters share it.
"""

from __future__ import annotations

import itertools
from typing import Any

from .figures import number, plain, rate

SPIKE_PHASES = ("before", "spike", "after")
DEFAULT_TOLERANCE = 0.2  # the runner's, when a spike block does not say


def is_closed(result: dict[str, Any]) -> bool:
    """Whether a result ran the closed model (users with think time) rather than a ladder."""
    return result.get("model") == "closed" or bool((result.get("config") or {}).get("users"))


def plan(result: dict[str, Any]) -> dict[str, Any]:
    """The closed model's plan (`config.users`): phases, think_min, think_max; empty when open."""
    return (result.get("config") or {}).get("users") or {}


def phases(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan's phases, each {users, ramp, hold}."""
    return list(plan(result).get("phases") or [])


def user_counts(result: dict[str, Any]) -> list[int]:
    """The users of each phase, in order."""
    return [int(phase.get("users", 0)) for phase in phases(result)]


def peak_index(counts: list[int]) -> int | None:
    """The phase with the most users (the first of equals), or None for an empty plan."""
    return max(range(len(counts)), key=lambda i: counts[i]) if counts else None


def is_spike(result: dict[str, Any]) -> bool:
    """Whether a closed result is a spike: its busiest phase has a phase before and after it."""
    counts = user_counts(result)
    peak = peak_index(counts)
    return is_closed(result) and peak is not None and 0 < peak < len(counts) - 1


def users_words(result: dict[str, Any]) -> str:
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


def think_times(result: dict[str, Any]) -> tuple[float, float] | None:
    """(shortest, longest) think time in seconds, or None when the result does not say."""
    low, high = number(plan(result).get("think_min")), number(plan(result).get("think_max"))
    return None if low is None or high is None else (low, high)


def mean_think(result: dict[str, Any]) -> float | None:
    """The mean think time in seconds (uniform between the two), or None."""
    think = think_times(result)
    return None if think is None else (think[0] + think[1]) / 2


def think_words(result: dict[str, Any]) -> str:
    """The think time as "Postgres vs MariaDB on two dedicated CPUs" says it: "50 to 150 ms"."""
    think = think_times(result)
    if think is None:
        return "? ms"
    low, high = (plain(round(value * 1000, 3)) for value in think)
    return f"{low} ms" if low == high else f"{low} to {high} ms"


def holds(result: dict[str, Any]) -> list[float]:
    """Seconds each level was held and measured: the ladder's hold, or each phase's."""
    config = result.get("config") or {}
    if is_closed(result):
        return [float(phase["hold"]) for phase in phases(result) if number(phase.get("hold")) is not None]
    hold = number((config.get("ladder") or {}).get("hold"))
    return [] if hold is None else [hold]


def plan_words(result: dict[str, Any]) -> str:
    """Every phase of the plan written out, for the setup section."""
    found = phases(result)
    ramps = {plain(phase.get("ramp")) for phase in found}
    hold_set = {plain(phase.get("hold")) for phase in found}
    counts = ", ".join(rate(phase.get("users", 0)) for phase in found)
    if len(ramps) == 1 and len(hold_set) == 1:
        ramp, hold = ramps.pop(), hold_set.pop()
        arrive = "at once" if ramp == "0" else f"over {ramp} s"
        return f"{counts} users; each level's users arrive {arrive}, then it is held {hold} s"
    return "; ".join(
        f"{rate(phase.get('users', 0))} users "
        + ("at once" if not phase.get("ramp") else f"over {plain(phase.get('ramp'))} s")
        + f", held {plain(phase.get('hold'))} s"
        for phase in found
    )


def spike_levels(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A spike's finished levels as (phase name, level): before, spike, after; empty for no spike."""
    peak = peak_index(user_counts(result))
    if peak is None or not is_spike(result):
        return []
    levels = {level["index"]: level for level in result.get("levels", [])}
    indexes = (peak - 1, peak, peak + 1)
    return [(name, levels[i]) for name, i in zip(SPIKE_PHASES, indexes, strict=True) if i in levels]


def spike_rate(result: dict[str, Any]) -> float | None:
    """Answers per second at the spike (the phase with the most users), or None before it finished."""
    found = dict(spike_levels(result)).get("spike")
    return None if found is None else float(found["achieved_rps"])


def recovery_words(result: dict[str, Any], short: bool = False) -> str:
    """How long p95 took to come back after the spike, from `spike.recovery_seconds`.

    "p95 back within 20 % after 3 s" or "p95 did not recover (...)"; `short` gives a table cell:
    "3 s", "did not recover", "not computed".
    """
    block = result.get("spike") or {}
    tolerance = number(block.get("tolerance"))
    share = plain(round(100 * (DEFAULT_TOLERANCE if tolerance is None else tolerance), 3))
    seconds = number(block.get("recovery_seconds"))
    if seconds is not None:
        return f"{plain(seconds)} s" if short else f"p95 back within {share} % after {plain(seconds)} s"
    if block.get("note") or not block:
        note = block.get("note") or "the run recorded no recovery time"
        return "not computed" if short else f"recovery not computed ({note})"
    return (
        "did not recover"
        if short
        else f"p95 did not recover: never back within {share} % of its pre-spike value"
    )
