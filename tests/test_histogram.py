"""Histogram against a slow exact reference: a sorted list of every value."""

from __future__ import annotations

import json
import math
import random

import pytest

from dbladder.histogram import (
    BUCKET_COUNT,
    HIGHEST_TRACKABLE,
    Histogram,
    bucket_bounds,
    bucket_index,
)

QUANTILES = (50, 90, 95, 99, 99.9)


def exact_percentile(values: list[int], q: float) -> int:
    """The reference: the value of rank ceil(q / 100 * n) (at least 1) in sorted order."""
    ordered = sorted(max(v, 0) for v in values)
    rank = max(math.ceil(round(q * len(ordered) / 100, 6)), 1)
    return ordered[rank - 1]


def histogram_of(values: list[int]) -> Histogram:
    histogram = Histogram()
    for value in values:
        histogram.record(value)
    return histogram


def uniform(rng: random.Random, n: int) -> list[int]:
    return [rng.randrange(0, 200_000) for _ in range(n)]


def log_normal(rng: random.Random, n: int) -> list[int]:
    return [int(rng.lognormvariate(7.0, 1.0)) for _ in range(n)]


def heavy_tail(rng: random.Random, n: int) -> list[int]:
    # Pareto with alpha 1.1: most values near 500 us, a few far out in seconds.
    return [int(500 * rng.paretovariate(1.1)) for _ in range(n)]


def constant(rng: random.Random, n: int) -> list[int]:
    return [12_345] * n


def small(rng: random.Random, n: int) -> list[int]:
    return [rng.randrange(0, 300) for _ in range(n)]


@pytest.mark.parametrize("distribution", [uniform, log_normal, heavy_tail, constant, small])
def test_percentiles_within_one_percent_of_exact(distribution) -> None:
    rng = random.Random(distribution.__name__)
    values = distribution(rng, 20_000)
    histogram = histogram_of(values)
    for q in QUANTILES:
        exact = exact_percentile(values, q)
        reported = histogram.percentile(q)
        assert abs(reported - exact) <= 0.01 * exact, (q, reported, exact)


def test_relative_error_bound_is_half_a_bucket() -> None:
    # Every value is reported within 1/256 of itself: the bound the layout promises.
    rng = random.Random(7)
    for _ in range(2_000):
        value = int(rng.lognormvariate(10.0, 4.0)) % HIGHEST_TRACKABLE
        # Rank 2 of 4 is the median: neither rank 1 (min) nor the last (max), which are exact.
        histogram = histogram_of([0, value, value, 2**40])
        reported = histogram.percentile(50)
        assert abs(reported - value) <= value / 256


def test_no_percentile_above_max_or_below_min() -> None:
    rng = random.Random(3)
    for case in range(300):
        n = rng.randrange(1, 60)
        scale = 10 ** rng.randrange(0, 10)
        values = [rng.randrange(-5, scale + 1) for _ in range(n)]
        histogram = histogram_of(values)
        assert histogram.min == max(min(values), 0)
        assert histogram.max == max(max(values), 0)
        for q in [0, 0.1, 1, 25, 50, 75, 90, 99, 99.9, 99.99, 100, rng.uniform(0, 100)]:
            value = histogram.percentile(q)
            assert histogram.min <= value <= histogram.max, (case, q, values)


def test_extreme_ranks_are_exact() -> None:
    histogram = histogram_of([1_000_003, 5_000_011, 77_777_777])
    assert histogram.percentile(0) == 1_000_003
    assert histogram.percentile(100) == 77_777_777
    assert histogram.percentiles([100, 0]) == [77_777_777, 1_000_003]


def test_percentile_rank_is_not_pushed_up_by_float_noise() -> None:
    # 99.9 / 100 * 1000 is 999.0000000000001 in floats, but the 99.9th of 1000 values is rank 999.
    histogram = histogram_of([1] * 999 + [200])
    assert histogram.percentile(99.9) == 1
    assert histogram.percentile(99.91) == 200


def test_exact_figures() -> None:
    values = [5, -3, 300, 1_000_000, 2**40]
    histogram = histogram_of(values)
    assert histogram.count == 5
    assert histogram.min == 0
    assert histogram.max == 2**40  # exact although above HIGHEST_TRACKABLE
    assert histogram.total == 5 + 0 + 300 + 1_000_000 + 2**40
    assert histogram.mean == histogram.total / 5
    assert histogram.percentile(100) == 2**40


def test_empty_histogram() -> None:
    histogram = Histogram()
    assert (histogram.count, histogram.min, histogram.max, histogram.total) == (0, 0, 0, 0)
    assert histogram.mean == 0.0
    assert histogram.percentile(0) == 0
    assert histogram.percentile(99.9) == 0
    assert histogram.percentiles(QUANTILES) == [0] * len(QUANTILES)
    assert Histogram.from_dict(histogram.to_dict()) == histogram
    assert histogram.subtract(histogram.copy()) == Histogram()
    merged = Histogram()
    merged.merge(histogram)
    assert merged == histogram


@pytest.mark.parametrize("q", [-0.1, 100.1, float("nan"), float("inf"), "50"])
def test_percentile_out_of_range(q) -> None:
    with pytest.raises(ValueError, match="from 0 to 100"):
        histogram_of([1, 2, 3]).percentile(q)


def test_record_agrees_with_bucket_index() -> None:
    # record() inlines the layout; it must file every value where bucket_index() says.
    edges = [0, 1, 127, 128, 255, 256, 257, 383, 384, 511, 512, HIGHEST_TRACKABLE - 1, HIGHEST_TRACKABLE]
    edges += [2**k + d for k in range(8, 32) for d in (-1, 0, 1)]
    rng = random.Random(11)
    edges += [rng.randrange(0, HIGHEST_TRACKABLE) for _ in range(2_000)]
    for value in edges:
        histogram = Histogram()
        histogram.record(value)
        index = bucket_index(value)
        assert histogram.to_dict()["indexes"] == [index], value
        lowest, highest = bucket_bounds(index)
        assert lowest <= value <= highest


def test_layout_is_contiguous() -> None:
    expected_lowest = 0
    for index in range(BUCKET_COUNT):
        lowest, highest = bucket_bounds(index)
        assert lowest == expected_lowest
        assert bucket_index(lowest) == bucket_index(highest) == index
        # Width at most 1/128 of the lowest value (buckets below 256 are 1 wide).
        assert highest - lowest + 1 <= max(1, lowest // 128)
        expected_lowest = highest + 1
    assert expected_lowest == HIGHEST_TRACKABLE + 1
    assert bucket_index(-7) == 0
    assert bucket_index(2**50) == BUCKET_COUNT - 1
    with pytest.raises(ValueError):
        bucket_bounds(BUCKET_COUNT)


def test_merge_equals_recording_all_into_one() -> None:
    rng = random.Random(5)
    first = log_normal(rng, 5_000)
    second = [*heavy_tail(rng, 3_000), -4, 2**35]
    merged = histogram_of(first)
    merged.merge(histogram_of(second))
    assert merged == histogram_of(first + second)
    assert merged.count == len(first) + len(second)


def test_merge_into_empty_and_of_empty() -> None:
    values = [10, 20, 30]
    target = Histogram()
    target.merge(histogram_of(values))
    assert target == histogram_of(values)
    target.merge(Histogram())
    assert target == histogram_of(values)


def test_copy_is_independent() -> None:
    histogram = histogram_of([1, 2, 3])
    snapshot = histogram.copy()
    histogram.record(4)
    assert snapshot == histogram_of([1, 2, 3])
    assert histogram.count == 4


def test_subtract_gives_the_later_values() -> None:
    rng = random.Random(9)
    before = log_normal(rng, 4_000)
    after = heavy_tail(rng, 4_000)
    histogram = histogram_of(before)
    snapshot = histogram.copy()
    histogram.record_many(after)
    difference = histogram.subtract(snapshot)
    only_after = histogram_of(after)
    assert difference.count == only_after.count
    assert difference.total == only_after.total
    assert difference.to_dict()["indexes"] == only_after.to_dict()["indexes"]
    assert difference.to_dict()["counts"] == only_after.to_dict()["counts"]
    assert difference.min <= difference.percentile(50) <= difference.max <= histogram.max
    for q in QUANTILES:
        exact = exact_percentile(after, q)
        assert abs(difference.percentile(q) - exact) <= 0.01 * exact


def test_subtract_min_and_max_from_buckets_when_not_new_extremes() -> None:
    histogram = histogram_of([100, 1_000_000])  # the extremes, recorded before the snapshot
    snapshot = histogram.copy()
    histogram.record_many([50_000, 60_001])
    difference = histogram.subtract(snapshot)
    lowest, _ = bucket_bounds(bucket_index(50_000))
    _, highest = bucket_bounds(bucket_index(60_001))
    assert (difference.min, difference.max) == (lowest, highest)
    assert lowest <= 50_000 < 60_001 <= highest
    assert difference.mean == (50_000 + 60_001) / 2


def test_subtract_min_and_max_exact_when_new_extremes() -> None:
    histogram = histogram_of([5_000, 6_000])
    snapshot = histogram.copy()
    histogram.record_many([4_001, 5_500, 900_001])
    difference = histogram.subtract(snapshot)
    assert (difference.min, difference.max) == (4_001, 900_001)


def test_subtract_max_bounded_to_later_max() -> None:
    histogram = histogram_of([1_000, 70_001])
    snapshot = histogram.copy()
    histogram.record(70_001)  # same value as the max: its bucket reaches above 70,001
    difference = histogram.subtract(snapshot)
    assert difference.max == 70_001  # not the bucket's upper edge
    assert difference.min == bucket_bounds(bucket_index(70_001))[0]


def test_subtract_of_nothing_new_is_empty() -> None:
    histogram = histogram_of([1, 2, 3])
    assert histogram.subtract(histogram.copy()) == Histogram()


def test_subtract_from_empty_snapshot_is_everything() -> None:
    histogram = histogram_of([7, 8_000, 90_000])
    assert histogram.subtract(Histogram()) == histogram


def test_subtract_rejects_a_later_snapshot() -> None:
    histogram = histogram_of([1, 2])
    later = histogram.copy()
    later.record(3)
    with pytest.raises(ValueError, match="earlier snapshot"):
        histogram.subtract(later)


def test_to_dict_round_trips_through_json() -> None:
    rng = random.Random(13)
    histogram = histogram_of([*heavy_tail(rng, 10_000), -1, 0, 2**45])
    data = json.loads(json.dumps(histogram.to_dict()))
    restored = Histogram.from_dict(data)
    assert restored == histogram
    assert restored.percentiles(QUANTILES) == histogram.percentiles(QUANTILES)
    # Compact: only non-empty buckets are stored.
    assert len(data["indexes"]) == len(data["counts"]) < BUCKET_COUNT
    assert all(c > 0 for c in data["counts"])


def test_from_dict_names_what_is_wrong() -> None:
    good = histogram_of([1, 2, 3]).to_dict()
    with pytest.raises(ValueError, match="missing total"):
        Histogram.from_dict({k: v for k, v in good.items() if k != "total"})
    with pytest.raises(ValueError, match="add up to 3, but count is 4"):
        Histogram.from_dict({**good, "count": 4})
    with pytest.raises(ValueError, match="indexes must be integers"):
        Histogram.from_dict({**good, "indexes": [1, 2, BUCKET_COUNT]})
    with pytest.raises(ValueError, match="sub_bucket_bits"):
        Histogram.from_dict({**good, "sub_bucket_bits": 5})
    with pytest.raises(ValueError, match="expected a dict"):
        Histogram.from_dict([])  # type: ignore[arg-type]
