"""Where a stall began and how long it lasted, from a level's seconds (issue 22's diagnosis).

Worked through for a server that stops answering at s for L seconds and then answers its backlog
at once, at a steady rate r of requests due:
  - from the latencies (`located_by_latencies`, when each second kept its max): every request due
    in the stall is answered at its end E, so a second k the stall covers from its start holds a
    request due at k that waited E - k, and k + max_k = E; the request that began it waited
    longest, L = the largest max, and s = E - L. Latency counts from the due time, so this holds
    when the generator reads its answers late on a busy machine: the counts of answers per
    second shift with that lateness, the latencies from due only grow by it, on both sides. (A
    clean CI run on a busy machine read the answers of the second before a stall 0.55 s late and
    the counts placed the stall that much after it began.)
  - from the counts (`located_by_counts`, for a result from before the max was kept): the second
    holding s answered only what was due before s, so s = k + answered_k / r (when the stall
    ended inside that same second, it answered everything in the end, and s is only known to lie
    in [k, k + 1 - L]: the middle of that is given, and how far off it can be); the p95 of that
    second is set by the requests due in the first 5 % of a second after s, which waited L less
    at most 0.05 s: L = p95 + 0.05 s.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Protocol


class Second(Protocol):
    """What the location reads of a second (the diagnosis's `Second` has it)."""

    @property
    def answered(self) -> int: ...
    @property
    def p95_ms(self) -> float | None: ...
    @property
    def max_ms(self) -> float | None: ...


TOP_SHARE_SECONDS = 0.05  # the 5 % above a p95, as seconds of a steady second's requests


def located_by_latencies(
    seconds: Sequence[Second], run: tuple[int, int], pass_p95_ms: float
) -> tuple[float, float] | None:
    """The stall's (length, start) from the largest latency of each second around the run of
    failing seconds (the module doc works it through), or None when one of them kept no max."""
    first, last = run
    around = [
        (number, seconds[number].max_ms) for number in range(max(first - 1, 0), min(last + 2, len(seconds)))
    ]
    if any(max_ms is None for _, max_ms in around):
        return None
    waited = [(number, max_ms / 1000) for number, max_ms in around if max_ms > pass_p95_ms]  # type: ignore[operator]
    if not waited:
        return None
    length = max(wait for _, wait in waited)
    ends = max(number + wait for number, wait in waited)
    return length, max(ends - length, 0.0)


def located_by_counts(
    seconds: Sequence[Second], run: tuple[int, int], passing: Sequence[Second]
) -> tuple[float, float, float | None]:
    """The stall's (length, start, how far off the start can be or None) from the answers that
    arrived in each second and the p95s: for results that kept no max per second."""
    first, last = run
    rate = statistics.median(s.answered for s in passing) or 1.0
    # Where it began: the first failing second, or the one before it when that one's answers
    # already fell short (a stall that began in its last 5 %, too little to fail its p95).
    begins = first
    if first > 0 and seconds[first - 1].answered < (1 - TOP_SHARE_SECONDS) * rate:
        begins = first - 1
    lengths = [
        (s.max_ms / 1000) if s.max_ms is not None else (s.p95_ms / 1000 + TOP_SHARE_SECONDS)
        for s in seconds[first : last + 1]
        if s.p95_ms is not None
    ]
    length = max(lengths, default=0.0)
    if seconds[begins].answered < (1 - TOP_SHARE_SECONDS) * rate:
        return length, begins + seconds[begins].answered / rate, None
    # It began and ended inside one second, which answered everything in the end: it began
    # somewhere in [begins, begins + 1 - length]; the middle is at most half of that away.
    within = max(0.0, 1.0 - length) / 2
    return length, begins + within, within
