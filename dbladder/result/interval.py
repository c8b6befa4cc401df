"""How well a level's p95 is known: a distribution-free interval from order statistics.

A level's p95 is one of its n latencies: the one of rank ceil(0.95 n). How far it may be from the
service's true 95th percentile depends only on n, not on the shape of the latencies, by the
order-statistic argument worked through once here. Let xi be the true q-quantile (q = 0.95) and
B the number of the n latencies at or below it: B is Binomial(n, q), whatever the distribution.
The l-th smallest latency X(l) is at or below xi exactly when at least l of them are, B >= l; the
u-th smallest X(u) is below xi exactly when B >= u. So

    P(X(l) <= xi <= X(u)) >= P(l <= B <= u - 1) = F(u - 1) - F(l - 1)      F: B's distribution

and the interval [X(l), X(u)] holds xi with at least 95 % confidence when each tail is at most
2.5 %: l the largest rank with F(l - 1) <= 0.025, u the smallest with F(u - 1) >= 0.975. Where
even the slowest answer is not far enough up (F(n - 1) < 0.975, that is 1 - q^n < 0.975: fewer
than 72 latencies for a p95) the interval has no upper end: nothing measured bounds the p95 from
above. `coverage` is the interval's exact confidence, F(u - 1) - F(l - 1), at least the one asked.

F is summed from the binomial's terms in logarithms (`math.lgamma`), over the terms within 12
standard deviations of its mean: those outside add less than 1e-30, and a level of a million
requests costs some 5,000 terms rather than a million. tests/result/test_interval.py checks the
ranks against an exact sum in fractions (`math.comb`) and the coverage by simulation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..formats import short_ms
from ..histogram import Histogram

CONFIDENCE = 0.95
"""The confidence of a level's p95 interval."""

WIDE = 0.2
"""An interval wider than this share of its p95 is shown beside the level (the table, the report)..."""

WIDE_OF_MARK = 0.05
"""... when it is also wider than this share of the pass mark: 3.8-6.0 ms around a p95 of 4.3 ms
is 51 % of it, and nothing to a 100 ms mark (every fast level of a run would carry the note)."""


@dataclass(frozen=True)
class Ranks:
    """The order statistics that bound a quantile: 1-based ranks among n values (`lower` None when
    no value bounds it from below, `upper` None when none bounds it from above), and the
    interval's exact confidence."""

    n: int
    lower: int | None
    upper: int | None
    coverage: float


def quantile_ranks(n: int, q: float = 0.95, confidence: float = CONFIDENCE) -> Ranks:
    """The ranks of the order statistics whose interval holds the q-quantile with at least
    `confidence` (module doc); n must be 1 or more."""
    if not (isinstance(n, int) and not isinstance(n, bool) and n >= 1):
        raise ValueError(f"n must be a whole number, 1 or more, not {n!r}")
    if not (0 < q < 1 and 0 < confidence < 1):
        raise ValueError(f"q and confidence must be between 0 and 1, not {q!r} and {confidence!r}")
    tail = (1 - confidence) / 2
    first, last = _window(n, q)
    # Below the window F is under 1e-30, within the tail: rank `first` has F(first - 1) ~ 0.
    lower: int | None = first if first >= 1 else None
    upper: int | None = None
    at_lower, at_upper = 0.0, 1.0  # F(lower - 1), F(upper - 1)
    cumulative = 0.0  # F(k)
    for k, term in zip(range(first, last + 1), _terms(n, q, first, last), strict=True):
        cumulative += term
        if cumulative <= tail:  # rank k + 1 is below the quantile with at most the tail's chance
            lower, at_lower = k + 1, cumulative
        elif k < n and cumulative >= 1 - tail:  # rank k + 1 is above it with at most the tail's
            upper, at_upper = k + 1, cumulative
            break
    return Ranks(n, lower, upper, round(min(at_upper, 1.0) - at_lower, 6))


def _window(n: int, q: float) -> tuple[int, int]:
    """The k whose binomial terms matter: within 12 standard deviations of the mean (and 10 more)."""
    spread = 12 * math.sqrt(n * q * (1 - q)) + 10
    return max(0, math.floor(n * q - spread)), min(n, math.ceil(n * q + spread))


def _terms(n: int, q: float, first: int, last: int) -> list[float]:
    """P(B = k) for k from first to last, B Binomial(n, q), from logarithms."""
    whole = math.lgamma(n + 1)
    log_q, log_p = math.log(q), math.log1p(-q)
    return [
        math.exp(whole - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_q + (n - k) * log_p)
        for k in range(first, last + 1)
    ]


def p95_interval(histogram: Histogram, mark_ms: float | None = None) -> dict[str, Any] | None:
    """A level's p95 interval from its latencies (the histogram the p95 is read from), as the level's
    row keeps it: {"low_ms", "high_ms" (None: no answer bounds it from above), "n", "coverage",
    "wide" (`is_wide` against the pass mark's p95 `mark_ms`)}; None without a latency."""
    n = histogram.count
    if n == 0:
        return None
    ranks = quantile_ranks(n)
    low, high = histogram.at_ranks([ranks.lower or 1, ranks.upper or n])
    interval: dict[str, Any] = {
        "low_ms": round(low / 1000, 3) if ranks.lower is not None else 0.0,
        "high_ms": round(high / 1000, 3) if ranks.upper is not None else None,
        "n": n,
        "coverage": ranks.coverage,
    }
    interval["wide"] = is_wide(histogram.percentile(95) / 1000, interval, mark_ms)
    return interval


def is_wide(p95_ms: float, interval: Any, mark_ms: float | None = None) -> bool:
    """Whether a p95's interval is worth showing beside it: open above, or wider than WIDE of the
    p95 and (given the pass mark's `mark_ms`) than WIDE_OF_MARK of the mark. `interval` is the
    row's `p95_interval` (typed or JSON data), whose own `wide` says it when it has one; None is
    not wide (an older result)."""
    if interval is None:
        return False
    said = interval.get("wide") if isinstance(interval, dict) else interval.wide
    if said is not None:
        return bool(said)
    low, high = _ends(interval)
    if high is None:
        return True
    width = high - low
    return width > WIDE * max(p95_ms, 1e-9) and (mark_ms is None or width > WIDE_OF_MARK * mark_ms)


def overlaps(interval: Any, mark_ms: float) -> bool:
    """Whether the interval holds the pass mark: the level's pass or failure by p95 is not sure."""
    if interval is None:
        return False
    low, high = _ends(interval)
    return low < mark_ms and (high is None or high >= mark_ms)


def interval_words(interval: Any) -> str:
    """ "180-320 ms", "180 ms or more" (open above)."""
    low, high = _ends(interval)
    if high is None:
        return f"{short_ms(low)} ms or more"
    return f"{short_ms(low)}-{short_ms(high)} ms"


def interval_note(interval: Any) -> str:
    """A level's note on its interval: "p95 interval 180-320 ms at 95 % confidence (from 150
    requests)"."""
    n = interval["n"] if isinstance(interval, dict) else interval.n
    return f"p95 interval {interval_words(interval)} at 95 % confidence (from {n:,} requests)"


def _ends(interval: Any) -> tuple[float, float | None]:
    if isinstance(interval, dict):
        return float(interval["low_ms"]), interval.get("high_ms")
    return float(interval.low_ms), interval.high_ms


@dataclass(frozen=True)
class Doubt:
    """A level a ceiling rests on whose pass or failure its p95 interval does not settle: `held`
    (the level at the ceiling, held, its interval reaching the mark) or not (the lowest level failed
    above it, failed by its p95 alone, its interval reaching under the mark), and in words."""

    held: bool
    words: str


def ceiling_doubts(
    levels: Sequence[Any], ceiling: float | None, mark_ms: float, max_fail_pct: float
) -> list[Doubt]:
    """The levels an open-model ceiling rests on (the level held at it, the lowest rate failed
    above it; a rate probed twice by its latest probe) whose p95 interval holds the pass mark."""
    latest = {level.offered_rps: level for level in levels if level.users is None}
    found = []
    held = latest.get(ceiling) if ceiling is not None else None
    if held is not None and held.passed and overlaps(held.p95_interval, mark_ms):
        found.append(Doubt(True, _doubt_words(held, "held", mark_ms)))
    above = [
        level
        for rate, level in latest.items()
        if not level.passed and (ceiling is None or rate > ceiling) and level.fail_pct < max_fail_pct
    ]
    failed = min(above, key=lambda level: level.offered_rps, default=None)
    lowest_failed = min(
        (rate for rate, level in latest.items() if not level.passed and (ceiling is None or rate > ceiling)),
        default=None,
    )
    if failed is not None and failed.offered_rps == lowest_failed and overlaps(failed.p95_interval, mark_ms):
        found.append(Doubt(False, _doubt_words(failed, "failed", mark_ms)))
    return found


def _doubt_words(level: Any, what: str, mark_ms: float) -> str:
    return (
        f"its level at {level.offered_rps:,.0f} req/s {what} with a p95 of {short_ms(level.p95_ms)} ms whose "
        f"95 % interval, {interval_words(level.p95_interval)}, holds the {mark_ms:g} ms pass mark"
    )
