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


def steady(count: int) -> list[Second]:
    return [Second(100, 100, 0, 4.0, 6.0) for _ in range(count)]


def test_a_stall_at_the_window_s_start_began_before_it():
    # The stall ended at 1.5 s into the window: the request due at 0 waited 1.5 s, the one due at
    # 1.0 waited 0.5 s; E = 1.5 and L = 1.5 put its start in the window at 0.
    seconds = [Second(100, 0, 0, 1450.0, 1500.0), Second(100, 150, 0, 450.0, 500.0), *steady(8)]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall", diagnosis.line
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(0.0)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(1.5)


def test_a_stall_in_the_window_s_last_part_second_outlasting_it():
    # A 9.99 s window (10 s held, 0.01 s warm-up): its last second is 0.99 s long. The server
    # stalls at 9.49 for 1 s: the requests due in [9.0, 9.49) are answered (49), those due after
    # wait until 10.49, past the window. p95 of the part-second: the 5 % that waited longest.
    seconds = [*steady(9), Second(99, 49, 0, 950.0, 1000.0, length=0.99)]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall", diagnosis.line
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(9.49)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(1.0)
    assert diagnosis.line == (
        "a stall of 1.0 s at 9.5 s into the level, still stalled when the window ended; p95 over "
        "the other 9 s was at most 4.0 ms"
    )


def test_a_stall_at_the_end_whose_catch_up_second_is_the_window_s_last():
    # The issue's: a stall at 7.0 s of a 9 s window, ended at 8.3 in its last second, which
    # answers the backlog (more than was sent) and fails on its own early requests' waits. The
    # catch-up second is the stall's end: k + max_k = 8 + 0.3 = 7 + 1.3.
    seconds = [*steady(7), Second(100, 0, 0, 1250.0, 1300.0), Second(100, 200, 0, 250.0, 300.0)]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall", diagnosis.line
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(7.0)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(1.3)
    assert "still stalled" not in diagnosis.line


def test_two_stalls_in_one_level_are_each_named_with_the_p95_of_the_rest():
    # One of 0.5 s inside second 1 (which answers all it was sent in the end), one of 0.8 s at
    # 6.6 over second 7's start (7 + 0.4 = 6.6 + 0.8).
    seconds = [
        *steady(1),
        Second(100, 100, 0, 450.0, 500.0),
        *steady(4),
        Second(100, 60, 0, 750.0, 800.0),
        Second(100, 140, 0, 350.0, 400.0),
        *steady(2),
    ]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall", diagnosis.line
    evidence = diagnosis.evidence
    assert (evidence["stall_start_s"], evidence["stall_start_within_s"]) == (pytest.approx(1.25), 0.25)
    assert evidence["stall_length_s"] == pytest.approx(0.5)
    assert evidence["stall_2_start_s"] == pytest.approx(6.6)
    assert evidence["stall_2_length_s"] == pytest.approx(0.8)
    assert evidence["stalls"] == 2
    assert diagnosis.line == (
        "2 stalls: 0.5 s at 1.2 s (within 0.2 s) and 0.8 s at 6.6 s into the level; p95 over the "
        "other 7 s was at most 4.0 ms"
    )


def test_a_backlog_that_grows_at_the_window_s_end_is_not_a_stall():
    # Waits that grow with the due time: the longest is the last second's, so the "start" E - L
    # lands in the run's last second, after failing seconds a stall cannot have caused.
    seconds = [
        *steady(7),
        Second(100, 90, 0, 180.0, 200.0),
        Second(100, 80, 0, 480.0, 500.0),
        Second(100, 70, 0, 880.0, 900.0),
    ]
    assert diagnose(seconds, 100, PASS_MS).kind == "cannot tell"
