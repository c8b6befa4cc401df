"""What happened in a stall's seconds, when the samples show it: the figures that stood out.

A stall (`diagnosis._stall`) is located and sized from the level's own counts; this module sets
beside it what the run's other samplers saw over the same seconds. Each sampler's readings come as
`Moment`s, spans of the level's measured window (seconds into it) with figures of one vocabulary:

    steal, iowait                  shares of the host's CPU time (the machine sampler)
    <role> CPU                     cores a role's processes used or were runnable and waited
                                   for (generator, service, database): what it wanted, which on a
                                   busy machine is more than it got
    schedule lag ms                the largest schedule lag of the requests due in the span
    lock waits                     share of the active sessions waiting for a lock (the activity probe)
    checkpoints                    checkpoints the database counted in the span (PostgreSQL)
    buffers written by checkpoints the buffers they wrote

A moment that overlaps the stall is *inside* it; one that ends before it or begins after it is
*outside*. The database's checkpoint counters move when a checkpoint ends and its statistics
are flushed, so for them the stall's window reaches COUNTER_LAG seconds past its end.

A figure *stands out* when its largest value inside is above its largest value in any second
outside, at least twice their median, and past a floor of its own (`FLOORS`: a role's CPU by
at least a third of a core over its median, steal above 10 % of the host, iowait above 20 %,
lock waits above half the sessions, any checkpoint at all, and a schedule lag of at least a
quarter of the stall, LAG_SHARE_OF_STALL: a generator 20 ms late cannot have held answers back
for a second). On this 2-core machine, shared, steal and a generator's lag come and go all level
(a lag of 20 ms in a stall's second beside 14 ms at most in the others, at a load of 11): a
figure only counts when those seconds had more of it than any other second of the level, and
more than the floor. Nothing standing out says nothing: the stall's line is then only where and
how long.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

COUNTER_LAG = 1.0  # seconds after a stall in which a checkpoint's counters still count
COUNTS = ("checkpoints", "buffers written by checkpoints")  # counts in a span, not levels
ROLES = ("generator", "service", "database")
CORES_ABOVE = 1 / 3  # a role's CPU in a stall at least this many cores above its median
LAG_SHARE_OF_STALL = 0.25  # a schedule lag named beside a stall is at least this share of it
# figure -> the least its largest value in the stall must reach to be named
FLOORS = {
    "steal": 0.10,
    "iowait": 0.20,
    "lock waits": 0.5,
    "checkpoints": 1.0,
    "buffers written by checkpoints": 1.0,
}


@dataclass(frozen=True)
class Moment:
    """A span [start, end) of a level's measured window, seconds into it, with what a sampler saw."""

    start: float
    end: float
    figures: Mapping[str, float]


def stall_events(
    moments: Sequence[Moment], start: float, length: float, more: Sequence[tuple[float, float]] = ()
) -> list[tuple[str, str, float]]:
    """What stood out in the stall [start, start + length] (and in the level's other stalls,
    `more`, as (start, length): inside is then any of them, outside none): (figure, words, value)
    for each, in the order of the module doc's vocabulary; empty when nothing did."""
    spans = [(start, length), *more]
    shortest = min(span_length for _, span_length in spans)
    names = list(dict.fromkeys(name for moment in moments for name in moment.figures))
    found: list[tuple[str, str, float, float]] = []
    for name in sorted(names, key=_order):
        lag = COUNTER_LAG if name in COUNTS else 0.0
        windows = [(begin, begin + span_length + lag) for begin, span_length in spans]
        inside: list[float] = []
        outside: list[float] = []
        for m in moments:
            if name in m.figures:
                overlaps = any(m.end > begin and m.start < end for begin, end in windows)
                (inside if overlaps else outside).append(m.figures[name])
        if not inside:
            continue
        most = max(inside)
        usual = statistics.median(outside) if outside else 0.0
        if most <= max(outside, default=0.0) or most < 2 * usual:
            continue
        if name.endswith(" CPU"):
            floor = usual + CORES_ABOVE
        elif name == "schedule lag ms":
            floor = LAG_SHARE_OF_STALL * shortest * 1000
        else:
            floor = FLOORS.get(name, float("inf"))
        if most < floor:
            continue
        found.append((name, _words(name, most, usual), most, most - usual))
    # One role burning a core makes the others wait for theirs: only the role whose CPU rose the
    # most is named (the spinning server: 0.11 to 1.01 cores; the generator beside it, 0.30 to 0.63).
    roles = [item for item in found if item[0].endswith(" CPU")]
    top = max(roles, key=lambda item: item[3], default=None)
    return [item[:3] for item in found if not item[0].endswith(" CPU") or item is top]


def _order(name: str) -> int:
    vocabulary = ["checkpoints", "buffers written by checkpoints", "lock waits", "steal", "iowait"]
    vocabulary += [f"{role} CPU" for role in ROLES] + ["schedule lag ms"]
    return vocabulary.index(name) if name in vocabulary else len(vocabulary)


def _words(name: str, most: float, usual: float) -> str:
    if name == "checkpoints":
        return f"{most:,.0f} checkpoint{'s' if most != 1 else ''} of the database"
    if name == "buffers written by checkpoints":
        return f"{most:,.0f} buffers written by checkpoints"
    if name == "lock waits":
        return f"lock waits {most:.0%} of the active sessions (median {usual:.0%} in the other seconds)"
    if name in ("steal", "iowait"):
        label = "CPU steal" if name == "steal" else "iowait"
        return f"{label} {most:.0%} of the host's CPU (median {usual:.0%} in the other seconds)"
    if name.endswith(" CPU"):
        return f"the {name} at {most:.2f} cores, used or waited for (median {usual:.2f} in the other seconds)"
    return (
        f"the generator behind its schedule by up to {most:,.0f} ms "
        f"(median {usual:,.1f} ms in the other seconds)"
    )


def stall_clause(events: Sequence[tuple[str, str, float]]) -> str:
    """The stall line's clause for what stood out; empty when nothing did."""
    if not events:
        return ""
    return "; in those seconds " + ", ".join(words for _, words, _ in events)
