"""The p95 interval's maths (result/interval.py) against a slow exact reference and by simulation."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from types import SimpleNamespace

import pytest

from dbladder.histogram import Histogram
from dbladder.result.interval import ceiling_doubts, is_wide, overlaps, p95_interval, quantile_ranks


def reference_ranks(n: int, q: Fraction, tail: Fraction) -> tuple[int | None, int | None]:
    """The ranks by the module doc's definition, summed exactly in fractions with math.comb."""
    cdf = []
    total = Fraction(0)
    for k in range(n + 1):
        total += math.comb(n, k) * q**k * (1 - q) ** (n - k)
        cdf.append(total)
    lower = max((r for r in range(1, n + 1) if cdf[r - 1] <= tail), default=None)
    upper = min((u for u in range(1, n + 1) if cdf[u - 1] >= 1 - tail), default=None)
    return lower, upper


@pytest.mark.parametrize("n", [*range(1, 120), 150, 199, 200, 201, 333, 500, 1000])
def test_the_ranks_are_those_of_an_exact_sum(n):
    found = quantile_ranks(n, 0.95, 0.95)
    assert (found.lower, found.upper) == reference_ranks(n, Fraction(95, 100), Fraction(25, 1000))


@pytest.mark.parametrize("n", [5, 30, 101, 400])
def test_the_median_too(n):
    found = quantile_ranks(n, 0.5, 0.95)
    assert (found.lower, found.upper) == reference_ranks(n, Fraction(1, 2), Fraction(25, 1000))


def test_a_p95_needs_72_latencies_for_an_upper_end():
    # 1 - 0.95^n >= 0.975 first at n = 72: below it even the slowest answer may be under the p95.
    assert quantile_ranks(71).upper is None
    assert quantile_ranks(72).upper == 72


def test_200_latencies_bound_the_p95_between_ranks_184_and_197():
    found = quantile_ranks(200)
    assert (found.lower, found.upper) == (184, 197)
    assert 0.95 <= found.coverage < 0.97


def test_large_levels_are_quick_and_close_to_the_normal_approximation():
    n = 1_000_000
    found = quantile_ranks(n)
    spread = 1.96 * math.sqrt(n * 0.95 * 0.05)
    assert found.lower is not None and found.upper is not None
    assert abs(found.lower - (0.95 * n - spread)) <= 3 and abs(found.upper - (0.95 * n + spread)) <= 3


def test_the_interval_holds_the_true_p95_at_least_95_percent_of_the_time():
    # Exponential latencies of mean 10 ms: the true p95 is 10 ln 20 ms. 2,000 draws of 200.
    rng = random.Random(7)
    true_p95 = 10 * math.log(20)
    ranks = quantile_ranks(200)
    assert ranks.lower is not None and ranks.upper is not None
    held = 0
    for _ in range(2000):
        values = sorted(rng.expovariate(1 / 10) for _ in range(200))
        held += values[ranks.lower - 1] <= true_p95 <= values[ranks.upper - 1]
    assert held / 2000 >= 0.94  # 95 % at least; 2,000 draws put 1 % of noise on it


def test_the_levels_interval_reads_its_ranks_from_the_histogram():
    histogram = Histogram()
    histogram.record_many(range(1, 201))  # 1..200 us: each value its own bucket, its own rank
    interval = p95_interval(histogram)
    assert interval == {
        "low_ms": 0.184,
        "high_ms": 0.197,
        "n": 200,
        "coverage": interval["coverage"],
        "wide": False,  # 13 us around a p95 of 190 us: 7 % of it
    }
    assert p95_interval(Histogram()) is None
    few = Histogram()
    few.record_many(range(1, 51))
    assert p95_interval(few)["high_ms"] is None


def test_wide_and_overlapping():
    assert is_wide(100, {"low_ms": 80, "high_ms": 130})  # 50 ms wide, over 20 % of 100
    assert not is_wide(100, {"low_ms": 95, "high_ms": 110})
    assert is_wide(100, {"low_ms": 95, "high_ms": None})
    assert not is_wide(100, None)
    # In proportion to the pass mark too: 3.8-6.0 ms around 4.3 ms is half the p95, nothing to 100 ms.
    fast = {"low_ms": 3.8, "high_ms": 6.0}
    assert is_wide(4.3, fast) and not is_wide(4.3, fast, 100) and is_wide(4.3, fast, 20)
    assert not is_wide(100, {"low_ms": 95, "high_ms": None, "wide": False})  # the row's own word
    assert overlaps({"low_ms": 200, "high_ms": 300}, 250)
    assert not overlaps({"low_ms": 100, "high_ms": 240}, 250)
    assert not overlaps({"low_ms": 260, "high_ms": 400}, 250)
    assert overlaps({"low_ms": 200, "high_ms": None}, 250)


def test_the_levels_a_ceiling_rests_on_are_in_doubt_when_their_interval_holds_the_mark():
    def level(rate, passed, p95, low, high, fail_pct=0.0):
        interval = {"low_ms": low, "high_ms": high, "n": 100, "coverage": 0.96}
        return SimpleNamespace(
            offered_rps=rate, passed=passed, p95_ms=p95, p95_interval=interval, fail_pct=fail_pct, users=None
        )

    levels = [
        level(8, False, 900, 500, None),  # the first probe, failed cold, probed again below
        level(8, True, 40, 35, 60),  # held: its interval reaches the 50 ms mark
        level(16, False, 55, 45, 70),  # failed by its p95, its interval reaching under the mark
    ]
    doubts = ceiling_doubts(levels, 8, 50, 1.0)
    assert [doubt.held for doubt in doubts] == [True, False]
    assert doubts[1].words == (
        "its level at 16 req/s failed with a p95 of 55 ms whose 95 % interval, 45-70 ms, holds the 50 ms "
        "pass mark"
    )
    # Failed by its errors as well: its failure is settled whatever its p95.
    levels[2] = level(16, False, 55, 45, 70, fail_pct=5.0)
    assert [doubt.held for doubt in ceiling_doubts(levels, 8, 50, 1.0)] == [True]
    assert ceiling_doubts([level(8, True, 10, 9, 11)], 8, 50, 1.0) == []
