"""Where a stall began and how long it lasted, on series worked out on paper: a server at a steady
100 requests due a second (answering each in 4 ms, the slowest in 6 ms) that stops answering at s
for L seconds, then answers its backlog at once. Each second keeps its max, so the stall is placed
from latencies (the counts' older way is tested in test_diagnosis.py)."""

from __future__ import annotations

import pytest

from dbladder.result.diagnosis import Second, diagnose

PASS_MS = 50.0


def test_the_start_comes_from_latencies_when_answers_are_counted_late():
    # s = 6.0, L = 1.0, with each second's max: the request due at 6.0 waited the whole 1.0 s, so
    # the stall ended at 7.0 and began at 7.0 - 1.0. A generator on a busy machine read the last
    # answers due before the stall 0.55 s late, so second 6 counts 55 answers: from the counts
    # the start would be 6.55, which a clean CI run on a busy machine once reported.
    steady_with_max = [Second(100, 100, 0, 4.0, 6.0) for _ in range(6)]
    seconds = [
        *steady_with_max,
        Second(100, 55, 0, 950.0, 1000.0),
        Second(100, 145, 0, 4.0, 6.0),
        *steady_with_max[:2],
    ]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall"
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(6.0)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(1.0)
    assert "stall_start_within_s" not in diagnosis.evidence


def test_a_stall_that_began_late_in_a_second_is_placed_by_the_next_seconds_max():
    # s = 6.7, L = 1.0: the request due at 6.7 waited 1.0 s; the first due in second 7, at 7.0,
    # waited until the end at 7.7, 0.7 s; 7 + 0.7 - 1.0 = 6.7.
    seconds = [
        *[Second(100, 100, 0, 4.0, 6.0) for _ in range(6)],
        Second(100, 70, 0, 950.0, 1000.0),
        Second(100, 130, 0, 650.0, 700.0),
        *[Second(100, 100, 0, 4.0, 6.0) for _ in range(2)],
    ]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(6.7)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(1.0)
