"""Where a stall began and how long it lasted, from a level's seconds (issue 22's diagnosis; issue
32: wherever it falls in the window).

Worked through for a server that stops answering at s for L seconds and then answers its backlog
at once, at E = s + L, at a steady rate r of requests due:
  - from the latencies (`located_by_latencies`, when each second kept its max): every request due
    in the stall is answered at E, so a second k the stall covers from its start holds a request
    due at k that waited E - k, and k + max_k = E; the request that began it waited longest, L =
    the largest max, and s = E - L. Latency counts from the due time, so this holds when the
    generator reads its answers late on a busy machine: the counts of answers per second shift
    with that lateness, the latencies from due only grow by it, on both sides. (A clean CI run on
    a busy machine read the answers of the second before a stall 0.55 s late and the counts
    placed the stall that much after it began.)
    When no second after the one holding the longest wait was reached by the stall, E is not
    read from a second's start, and s lies in that second, k: if the window ended before the
    stall did (k is its last second, and it answered short of its rate), the answers that came
    in it are those due before s, so s = k + answered_k / r; otherwise the stall began and ended
    inside k, which answered everything in the end, and s is only known to lie in
    [k, k + length_k - L]: the middle of that is given, and how far off it can be.
    A stall is one shape, and a growing backlog another: the longest wait is the first's (the
    request due at s), and every later second of the run waited until about E. A backlog's waits
    grow with the due time, so its longest wait is the last second's and its s lands after the
    run's first second: `located_by_latencies` refuses such a run (None), and so a run of failing
    seconds at the window's end is a stall only when its latencies have a stall's shape.
  - from the counts (`located_by_counts`, for a result from before the max was kept): the second
    holding s answered only what was due before s, so s = k + answered_k / r (when the stall
    ended inside that same second, it answered everything in the end, and s is only known to lie
    in [k, k + 1 - L]: the middle of that is given, and how far off it can be); the p95 of that
    second is set by the requests due in the first 5 % of a second after s, which waited L less
    at most 0.05 s: L = p95 + 0.05 s.

The catch-up second, which answers the backlog and so more than was sent in it, is where E falls:
it is the stall's end, part of its run when its own early requests waited past the mark.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class StallSecond(Protocol):
    """What the location reads of a second (the diagnosis's `Second` has it)."""

    @property
    def sent(self) -> int: ...
    @property
    def answered(self) -> int: ...
    @property
    def p95_ms(self) -> float | None: ...
    @property
    def max_ms(self) -> float | None: ...
    @property
    def length(self) -> float: ...


@dataclass(frozen=True)
class Stall:
    """A stall: where it began and how long it lasted, seconds into the measured window, and how
    far off the start can be (None when it is located)."""

    start: float
    length: float
    within: float | None = None


TOP_SHARE_SECONDS = 0.05  # the 5 % above a p95, as seconds of a steady second's requests
# How far before E a later second of a stall's run may read its wait's end (k + max_k): the
# backlog answered at once reaches the generator over a moment (thousands of answers at a high
# rate), and a busy machine reads some of them late. A backlog that grows 0.2 s a second, the
# FIFO server offered 600 of its 500, is refused by its s landing after the run's first second.
END_SPREAD_S = 0.3
END_SPREAD_SHARE = 0.1  # ... and this share of the stall's length


def steady_rate(passing: Sequence[StallSecond]) -> float:
    """Answers per second of the seconds that passed (a part-second's over its length): the rate a
    stall's seconds are set against."""
    rates = [s.answered / s.length for s in passing if s.length > 0]
    return statistics.median(rates) if rates else 0.0


def located_by_latencies(
    seconds: Sequence[StallSecond], run: tuple[int, int], pass_p95_ms: float, rate: float
) -> Stall | None:
    """The stall behind a run of failing seconds from the largest latency of each of its seconds
    and of the ones beside it (the module doc works it through), or None when one of them kept no
    max or their waits do not have a stall's shape. The second before counts for a stall that
    began in its last 5 %, too little to fail its p95. The second after counts when it caught up
    (more answers than sent): the stall ended in it, and its first request's wait, too short to
    fail it, says when; a passing second's few slow answers are not read as a stall's end."""
    first, last = run
    if any(seconds[n].max_ms is None for n in range(first, last + 1)):
        return None
    waited = [
        (n, seconds[n].max_ms / 1000)  # type: ignore[operator]
        for n in range(max(first - 1, 0), last + 1)
        if seconds[n].max_ms is not None and seconds[n].max_ms > pass_p95_ms  # type: ignore[operator]
    ]
    if not waited:
        return None
    after = last + 1
    if after < len(seconds) and catches_up(seconds[after]):
        # Its first request waited for the stall's end only if it waited longer than usual: a
        # level's usual slowest answer (the median second's max) is service, not stall.
        usual = statistics.median(s.max_ms for s in seconds if s.max_ms is not None)
        if (seconds[after].max_ms or 0.0) > 2 * usual:
            waited.append((after, seconds[after].max_ms / 1000))  # type: ignore[operator]
    length = max(wait for _, wait in waited)
    longest = next(n for n, wait in waited if wait == length)
    end = max(n + wait for n, wait in waited)
    within = None
    if any(n > longest for n, _ in waited):  # the stall reached a later second: E read from its start
        start = end - length
    elif (
        longest == len(seconds) - 1
        and rate > 0
        and seconds[longest].answered < ((1 - TOP_SHARE_SECONDS) * rate * seconds[longest].length)
    ):
        # The window ended before the stall did: what came in its last second was due before s.
        start = longest + min(seconds[longest].answered / rate, seconds[longest].length)
    else:
        # It began and ended inside one second: somewhere in [k, k + length_k - L].
        within = max(0.0, seconds[longest].length - length) / 2
        start = longest + within
        within = within or None  # a stall as long as its second: located
    start = max(start, 0.0)
    if not first - 1 <= start < first + 1:
        return None  # the longest wait came after the run's first second: a backlog that grew
    spread = END_SPREAD_S + END_SPREAD_SHARE * length
    for n in range(first, last + 1):
        if n > start and n + seconds[n].max_ms / 1000 < start + length - spread:  # type: ignore[operator]
            return None  # a second inside the stall that did not wait until its end
    return Stall(start, length, within)


def located_by_counts(
    seconds: Sequence[StallSecond], run: tuple[int, int], passing: Sequence[StallSecond]
) -> Stall:
    """The stall behind a run of failing seconds from the answers that arrived in each second and
    the p95s: for results that kept no max per second."""
    first, last = run
    rate = steady_rate(passing) or 1.0
    # Where it began: the first failing second, or the one before it when that one's answers
    # already fell short (a stall that began in its last 5 %, too little to fail its p95).
    begins = first
    if first > 0 and seconds[first - 1].answered < (1 - TOP_SHARE_SECONDS) * rate * seconds[first - 1].length:
        begins = first - 1
    lengths = [
        (s.max_ms / 1000) if s.max_ms is not None else (s.p95_ms / 1000 + TOP_SHARE_SECONDS)
        for s in seconds[first : last + 1]
        if s.p95_ms is not None
    ]
    length = max(lengths, default=0.0)
    if seconds[begins].answered < (1 - TOP_SHARE_SECONDS) * rate * seconds[begins].length:
        return Stall(begins + seconds[begins].answered / rate, length)
    # It began and ended inside one second, which answered everything in the end: it began
    # somewhere in [begins, begins + 1 - length]; the middle is at most half of that away.
    within = max(0.0, 1.0 - length) / 2
    return Stall(begins + within, length, within)


def catches_up(second: StallSecond) -> bool:
    """A second that answered more than was sent in it: a backlog's answers came in it."""
    return second.answered > (1 + TOP_SHARE_SECONDS) * second.sent
