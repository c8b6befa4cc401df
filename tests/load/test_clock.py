"""The clocks (dbladder.load.clock): a fake one where time matters, the monotonic one on time."""

from __future__ import annotations

import asyncio

import pytest

from dbladder.load.clock import FakeClock, MonotonicClock
from dbladder.plans import Ladder, ladder_due_times


def test_fake_clock_runs_a_schedule_in_no_time() -> None:
    ladder = Ladder(start=4, step=2, steps=3, hold=1.5)
    clock = FakeClock()
    sent: list[tuple[int, float]] = []

    async def dispatch() -> None:
        for level, due in ladder_due_times(ladder):
            await clock.sleep_until(due)
            sent.append((level.index, clock.now()))

    asyncio.run(dispatch())
    assert sent == [(level.index, due) for level, due in ladder_due_times(ladder)]
    assert [index for index, _ in sent].count(0) == 6
    assert [index for index, _ in sent].count(2) == 12
    assert clock.sleeps == [due for _, due in sent]


def test_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock(start=5.0)
    assert clock.now() == 5.0
    clock.advance(1.5)
    assert clock.now() == 6.5
    asyncio.run(clock.sleep_until(3.0))  # already past: time does not go back
    assert clock.now() == 6.5
    asyncio.run(clock.sleep_until(8.0))
    assert clock.now() == 8.0
    with pytest.raises(ValueError, match="forward"):
        clock.advance(-1)


def test_monotonic_clock_wakes_at_the_due_time() -> None:
    clock = MonotonicClock()
    assert 0 <= clock.now() < 1

    async def wait() -> list[float]:
        lateness = []
        for delay in (0.0005, 0.003, 0.01):
            due = clock.now() + delay
            await clock.sleep_until(due)
            lateness.append(clock.now() - due)
        due = clock.now() - 1  # already past: returns at once
        await clock.sleep_until(due)
        lateness.append(clock.now() - due - 1)
        return lateness

    lateness = asyncio.run(wait())
    assert all(late >= 0 for late in lateness)
    # Generous: a busy CI machine may preempt us; the median here is microseconds.
    assert all(late < 0.05 for late in lateness)


def test_monotonic_clock_spin_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="spin"):
        MonotonicClock(spin=-0.001)
