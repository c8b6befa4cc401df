"""A ladder's levels and their due times (dbladder.plans.planned_levels), checked exactly."""

from __future__ import annotations

import itertools

import pytest

from dbladder.plans import Ladder, PlannedLevel, due_times, ladder_due_times

# Seed 000's read ladder: 1,000 to 20,000 requests/s in steps of 1,000, 30 s each.
READ = Ladder(start=1000, step=1000, steps=20, hold=30)


def test_read_ladder_levels() -> None:
    levels = READ.levels()
    assert [level.index for level in levels] == list(range(20))
    assert [level.rate for level in levels] == [1000 * (i + 1) for i in range(20)]
    assert [level.start for level in levels] == [30 * i for i in range(20)]
    assert [level.end for level in levels] == [30 * (i + 1) for i in range(20)]
    assert all(level.hold == 30 and level.warmup == 0 for level in levels)
    assert READ.duration == 600
    assert READ.total_requests() == 30 * sum(range(1000, 20_001, 1000))


def test_read_ladder_count_per_level_is_rate_times_hold() -> None:
    for level in READ.levels():
        assert level.requests == level.rate * level.hold
    # Walk the generator in full for the smallest and the largest level.
    first, last = READ.levels()[0], READ.levels()[-1]
    assert sum(1 for _ in due_times(first)) == 30_000
    assert sum(1 for _ in due_times(last)) == 600_000


def test_read_ladder_first_and_last_due_times() -> None:
    for level in READ.levels():
        times = list(itertools.islice(due_times(level), 3))
        assert times == [level.start, level.start + 1 / level.rate, level.start + 2 / level.rate]
    first = list(due_times(READ.levels()[0]))
    assert first[0] == 0.0
    assert first[-1] == 29_999 / 1000
    last = list(due_times(READ.levels()[-1]))
    assert last[0] == 570.0
    assert last[-1] == 570 + 599_999 / 20_000
    assert last[-1] < 600


def test_no_drift_over_a_long_hold() -> None:
    level = Ladder(start=7, step=0, steps=3, hold=3600).levels()[2]
    assert level.start == 7200
    times = list(due_times(level))
    assert len(times) == 7 * 3600
    assert times == [7200 + i / 7 for i in range(7 * 3600)]
    assert abs(times[-1] - (level.end - 1 / 7)) < 1e-9
    # What it avoids: adding 1/7 up 25,199 times is measurably off.
    accumulated = 7200.0
    for _ in range(len(times) - 1):
        accumulated += 1 / 7
    assert accumulated != times[-1]


def test_fractional_rate_rounds_the_count_up() -> None:
    level = PlannedLevel(index=0, rate=0.5, start=10, hold=3, warmup=0)
    assert list(due_times(level)) == [10.0, 12.0]
    level = PlannedLevel(index=0, rate=1000.5, start=0, hold=30, warmup=0)
    assert level.requests == 30_015
    assert sum(1 for _ in due_times(level)) == 30_015


def test_warmup_and_measured_from() -> None:
    levels = Ladder(start=10, step=5, steps=3, hold=20, warmup=5).levels()
    assert [(level.start, level.measured_from, level.end) for level in levels] == [
        (0, 5, 20),
        (20, 25, 40),
        (40, 45, 60),
    ]
    # Warm-up requests are still due: it is the recorder that leaves them out.
    assert next(due_times(levels[1])) == 20


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_parts_cover_each_request_exactly_once(parts: int) -> None:
    ladder = Ladder(start=101, step=37, steps=4, hold=2.5)
    everything = list(ladder_due_times(ladder))
    shares = [list(ladder_due_times(ladder, part, parts)) for part in range(parts)]
    assert sum(len(share) for share in shares) == len(everything)
    assert sorted(itertools.chain.from_iterable(shares), key=lambda pair: pair[1]) == everything
    for share in shares:
        assert [due for _, due in share] == sorted(due for _, due in share)  # each part in order
        # Sizes differ by at most one per level.
        assert abs(len(share) - len(everything) / parts) <= ladder.steps


def test_part_takes_every_parts_th_request() -> None:
    level = PlannedLevel(index=0, rate=10, start=0, hold=1, warmup=0)
    assert list(due_times(level, 1, 3)) == [0.1, 0.4, 0.7]


@pytest.mark.parametrize(("part", "parts"), [(0, 0), (3, 3), (-1, 2), (0, 1.5)])
def test_bad_parts(part: int, parts: int) -> None:
    with pytest.raises(ValueError, match="part"):
        next(due_times(READ.levels()[0], part, parts))
