"""A mergeable log-linear latency histogram, HdrHistogram style.

Values are integer microseconds. Values below 256 get a bucket each (exact). Above that, every
power of two [2**k, 2**(k+1)) is split into 128 equal buckets, so a bucket's width is at most
1/128 of its lowest value. Working the layout through once, for a value v >= 256:

    shift = v.bit_length() - 8          # so that v >> shift is in [128, 255]
    index = shift * 128 + (v >> shift)  # shift 1 gives 256..383, shift 2 gives 384..511, ...

and back: shift = index // 128 - 1 (0 below 256), lowest value = (index - shift * 128) << shift,
width = 1 << shift. A percentile is reported as the middle of its bucket, so it is off by at most
half a width: a relative error of at most 1/256 (0.4 %), and none below 256 us.

Values up to HIGHEST_TRACKABLE (2**32 - 1 us, about 71 minutes) get their own bucket; larger ones
share the top bucket, while count, min, max and total stay exact for every value. That makes 3328
buckets, a plain list of ints: copying, merging and subtracting are one pass over it.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Iterable
from typing import Any

SUB_BUCKET_BITS = 7
SUB_BUCKETS = 1 << SUB_BUCKET_BITS  # 128 buckets per power of two
HIGHEST_TRACKABLE = (1 << 32) - 1
_EXACT_BELOW = 2 * SUB_BUCKETS  # 256: values below this are their own bucket
# Sentinel for the minimum of an empty histogram: larger than any latency one can record, and an
# int, so the comparison on the hot path stays int-to-int.
_NO_MIN = 1 << 256


def bucket_index(value_us: int) -> int:
    """The index of the bucket a value (clamped to 0..HIGHEST_TRACKABLE) falls in."""
    value = min(max(value_us, 0), HIGHEST_TRACKABLE)
    if value < _EXACT_BELOW:
        return value
    shift = value.bit_length() - (SUB_BUCKET_BITS + 1)
    return (shift << SUB_BUCKET_BITS) + (value >> shift)


BUCKET_COUNT = bucket_index(HIGHEST_TRACKABLE) + 1
_TOP = BUCKET_COUNT - 1


def bucket_bounds(index: int) -> tuple[int, int]:
    """(lowest, highest) value that falls in bucket `index`; the top bucket also holds larger values."""
    if not 0 <= index < BUCKET_COUNT:
        raise ValueError(f"bucket index must be from 0 to {BUCKET_COUNT - 1}, not {index}")
    shift = max((index >> SUB_BUCKET_BITS) - 1, 0)
    lowest = (index - (shift << SUB_BUCKET_BITS)) << shift
    return lowest, lowest + (1 << shift) - 1


def _middle(index: int) -> int:
    lowest, highest = bucket_bounds(index)
    return (lowest + highest + 1) // 2


class Histogram:
    """Counts of integer-microsecond latencies in log-linear buckets, with exact count/min/max/total.

    Not thread-safe; meant for one event loop. Processes exchange histograms with to_dict/from_dict
    and combine them with merge.
    """

    __slots__ = ("_count", "_counts", "_max", "_min", "_total")

    def __init__(self) -> None:
        self._counts: list[int] = [0] * BUCKET_COUNT
        self._count = 0
        self._total = 0
        self._min = _NO_MIN
        self._max = 0

    # -----------------------------------------------------------------------------------------
    # Recording

    def record(self, value_us: int) -> None:
        """Record one latency in microseconds; negatives count as 0."""
        # The hot path, once per request: the literals are _EXACT_BELOW (256), HIGHEST_TRACKABLE,
        # SUB_BUCKET_BITS + 1 (8) and SUB_BUCKET_BITS (7), inlined because a module-global lookup
        # costs as much as the arithmetic. test_histogram checks this against bucket_index().
        if value_us < 256:
            if value_us < 0:
                value_us = 0
            self._counts[value_us] += 1
        elif value_us <= 4294967295:
            shift = value_us.bit_length() - 8
            self._counts[(shift << 7) + (value_us >> shift)] += 1
        else:
            self._counts[-1] += 1
        self._count += 1
        self._total += value_us
        if value_us > self._max:
            self._max = value_us
        if value_us < self._min:
            self._min = value_us

    def record_many(self, values: Iterable[int]) -> None:
        """Record every value of an iterable, as record() would one by one."""
        record = self.record
        for value in values:
            record(value)

    # -----------------------------------------------------------------------------------------
    # Exact figures

    @property
    def count(self) -> int:
        """How many values were recorded."""
        return self._count

    @property
    def total(self) -> int:
        """The sum of the recorded values (negatives counted as 0), for the mean."""
        return self._total

    @property
    def min(self) -> int:
        """The smallest recorded value; 0 when empty."""
        return self._min if self._count else 0

    @property
    def max(self) -> int:
        """The largest recorded value, exact even above HIGHEST_TRACKABLE; 0 when empty."""
        return self._max

    @property
    def mean(self) -> float:
        """The exact mean of the recorded values; 0.0 when empty."""
        return self._total / self._count if self._count else 0.0

    # -----------------------------------------------------------------------------------------
    # Percentiles

    def percentile(self, q: float) -> int:
        """The value at or below which q % of the recorded values lie (q from 0 to 100); 0 when empty.

        The q-th percentile is the value of rank ceil(q / 100 * count) in sorted order (at least
        rank 1), reported as the middle of its bucket but never below min or above max. Rank 1 is
        min and the last rank is max, exactly.
        """
        return self.percentiles([q])[0]

    def percentiles(self, qs: Iterable[float]) -> list[int]:
        """percentile(q) for each q, in the order given, with one pass over the buckets."""
        ranks = [self._rank(q) for q in qs]  # a q out of range is refused, also when empty
        return self.at_ranks(ranks) if self._count else [0] * len(ranks)

    def at_ranks(self, ranks: Iterable[int]) -> list[int]:
        """The value of each rank (1 the smallest, `count` the largest) in sorted order, reported
        as percentile() reports its rank: the middle of its bucket, never below min or above max."""
        ranks = list(ranks)
        if any(not 1 <= rank <= self._count for rank in ranks):
            raise ValueError(f"ranks must be from 1 to the count ({self._count}), not {ranks!r}")
        # The running count of every bucket, summed in C (a Python loop over the 3328 buckets took
        # about 300 us; the live dashboard asks for a few percentiles twice a second). A rank's
        # bucket is the first whose running count reaches it, which is never an empty one.
        running = list(itertools.accumulate(self._counts))
        return [self._value_at(rank, bisect.bisect_left(running, rank)) for rank in ranks]

    def _rank(self, q: float) -> int:
        if not (isinstance(q, int | float) and 0 <= q <= 100):
            raise ValueError(f"a percentile must be a number from 0 to 100, not {q!r}")
        # Rounding first keeps float noise (99.9 / 100 * 1000 = 999.0000000000001) from pushing the
        # rank one up.
        rank = math.ceil(round(q * self._count / 100, 6))
        return min(max(rank, 1), self._count)

    def _value_at(self, rank: int, index: int) -> int:
        if rank == 1:
            return self._min
        if rank == self._count:
            return self._max
        return min(max(_middle(index), self._min), self._max)

    # -----------------------------------------------------------------------------------------
    # Combining

    def merge(self, other: Histogram) -> None:
        """Add every value recorded in `other` to this histogram, in place."""
        if not other._count:
            return
        self._counts = list(map(operator.add, self._counts, other._counts))
        self._count += other._count
        self._total += other._total
        self._min = min(self._min, other._min)
        self._max = max(self._max, other._max)

    def copy(self) -> Histogram:
        """An independent copy: a snapshot for subtract()."""
        clone = Histogram()
        clone._counts = self._counts.copy()
        clone._count = self._count
        clone._total = self._total
        clone._min = self._min
        clone._max = self._max
        return clone

    def subtract(self, earlier: Histogram) -> Histogram:
        """The values recorded between the snapshot `earlier` (a copy of this histogram) and now.

        Counts, count and total are exact. min and max are exact when the extreme was recorded
        after the snapshot (it differs from the snapshot's); otherwise they are the edges of the
        lowest and highest non-empty bucket, kept within this histogram's min and max.
        Raises ValueError if `earlier` has a bucket with more values than this one has.
        """
        counts = list(map(operator.sub, self._counts, earlier._counts))
        if earlier._count > self._count or any(c < 0 for c in counts):
            raise ValueError("subtract() needs an earlier snapshot (copy) of the same histogram")
        difference = Histogram()
        difference._count = self._count - earlier._count
        if not difference._count:
            return difference
        difference._counts = counts
        difference._total = self._total - earlier._total
        lowest = next(i for i, c in enumerate(counts) if c)
        highest = next(i for i in range(_TOP, -1, -1) if counts[i])
        if self._min < earlier._min:
            difference._min = self._min
        else:
            difference._min = min(max(bucket_bounds(lowest)[0], self._min), self._max)
        if self._max > earlier._max:
            difference._max = self._max
        elif highest == _TOP:
            # The top bucket has no upper edge (it holds everything above HIGHEST_TRACKABLE).
            difference._max = self._max
        else:
            difference._max = max(min(bucket_bounds(highest)[1], self._max), difference._min)
        return difference

    # -----------------------------------------------------------------------------------------
    # Serialising

    def to_dict(self) -> dict[str, Any]:
        """A compact JSON-serialisable form: the exact figures and the non-empty buckets only."""
        # compress and filter walk the 3328 buckets in C: a second's histogram is written twice a
        # second for the live dashboard, and every level's several times.
        indexes = list(itertools.compress(range(BUCKET_COUNT), self._counts))
        return {
            "sub_bucket_bits": SUB_BUCKET_BITS,
            "count": self._count,
            "min": self.min,
            "max": self._max,
            "total": self._total,
            "indexes": indexes,
            "counts": list(filter(None, self._counts)),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Histogram:
        """The histogram to_dict() described; raises ValueError naming what is wrong with `data`."""
        problems = _dict_problems(data)
        if problems:
            raise ValueError("not a serialised histogram: " + "; ".join(problems))
        histogram = cls()
        for index, bucket_count in zip(data["indexes"], data["counts"], strict=True):
            histogram._counts[index] += bucket_count
        histogram._count = data["count"]
        histogram._total = data["total"]
        histogram._max = data["max"]
        histogram._min = data["min"] if data["count"] else _NO_MIN
        return histogram

    # -----------------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Histogram):
            return NotImplemented
        return (
            self._count == other._count
            and self._total == other._total
            and self.min == other.min
            and self._max == other._max
            and self._counts == other._counts
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Histogram(count={self._count}, min={self.min}, max={self._max}, mean={self.mean:.1f})"


def _dict_problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return [f"expected a dict, not {type(data).__name__}"]
    problems = []
    keys = ("sub_bucket_bits", "count", "min", "max", "total", "indexes", "counts")
    missing = [key for key in keys if key not in data]
    if missing:
        return [f"missing {', '.join(missing)}"]
    if data["sub_bucket_bits"] != SUB_BUCKET_BITS:
        bits = data["sub_bucket_bits"]
        problems.append(f"sub_bucket_bits is {bits!r}, this version reads {SUB_BUCKET_BITS}")
    for key in ("count", "min", "max", "total"):
        if not _is_count(data[key]):
            problems.append(f"{key} must be an integer >= 0, not {data[key]!r}")
    indexes, counts = data["indexes"], data["counts"]
    if not (isinstance(indexes, list) and isinstance(counts, list) and len(indexes) == len(counts)):
        problems.append("indexes and counts must be lists of the same length")
    elif not all(isinstance(i, int) and 0 <= i < BUCKET_COUNT for i in indexes):
        problems.append(f"indexes must be integers from 0 to {BUCKET_COUNT - 1}")
    elif len(set(indexes)) != len(indexes):
        problems.append("indexes must not repeat")
    elif not all(_is_count(c) and c > 0 for c in counts):
        problems.append("counts must be integers > 0")
    elif not problems:
        if sum(counts) != data["count"]:
            problems.append(f"counts add up to {sum(counts)}, but count is {data['count']}")
        if data["count"] and data["min"] > data["max"]:
            problems.append(f"min {data['min']} is above max {data['max']}")
    return problems


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
