"""What stood out in a stall's seconds (result/stall_events.py), on readings made up to show each rule."""

from __future__ import annotations

from dbladder.result.diagnosis import Second, diagnose
from dbladder.result.stall_events import Moment, stall_clause, stall_events


def each_second(name: str, values: list[float]) -> list[Moment]:
    return [Moment(k, k + 1, {name: value}) for k, value in enumerate(values)]


def test_nothing_standing_out_says_nothing():
    moments = each_second("steal", [0.02, 0.03, 0.02, 0.04, 0.03, 0.02])
    assert stall_events(moments, 3.2, 1.0) == []
    assert stall_clause([]) == ""


def test_steal_in_the_stall_above_every_other_second_and_its_floor_is_named():
    moments = each_second("steal", [0.02, 0.03, 0.02, 0.35, 0.05, 0.02])
    assert stall_events(moments, 3.2, 0.6) == [
        ("steal", "CPU steal 35% of the host's CPU (median 2% in the other seconds)", 0.35)
    ]


def test_a_figure_as_high_elsewhere_in_the_level_is_not_named():
    # Steal of 35 % in the stall, but 40 % in another second: it did not stand out.
    moments = each_second("steal", [0.02, 0.40, 0.02, 0.35, 0.05, 0.02])
    assert stall_events(moments, 3.2, 0.6) == []


def test_a_checkpoint_counted_the_second_after_the_stall_is_named():
    # Its counters move when it ends: the second after the stall still counts.
    moments = each_second("checkpoints", [0, 0, 0, 0, 1, 0, 0])
    assert [name for name, _, _ in stall_events(moments, 3.1, 0.8)] == ["checkpoints"]
    assert stall_events(moments, 1.1, 0.5) == []


def test_a_schedule_lag_short_of_a_quarter_of_the_stall_is_not_named():
    # 20 ms against 14 ms at most elsewhere: above the rest, but far too short to hold a second back.
    moments = each_second("schedule lag ms", [8.0, 14.0, 9.0, 20.0, 9.0, 10.0])
    assert stall_events(moments, 3.0, 1.0) == []
    held = each_second("schedule lag ms", [8.0, 14.0, 9.0, 900.0, 9.0, 10.0])
    assert stall_events(held, 3.0, 1.0)[0][1] == (
        "the generator behind its schedule by up to 900 ms (median 9.0 ms in the other seconds)"
    )


def test_with_two_stalls_a_figure_stands_out_against_the_seconds_of_neither():
    # The service spun a core in both stalls: against the seconds of neither it stands out; set
    # against the other stall's second, it would not.
    moments = each_second("service CPU", [0.1, 1.0, 0.1, 0.1, 0.1, 0.1, 1.0, 0.1])
    assert [name for name, _, _ in stall_events(moments, 1.2, 0.5, [(6.1, 0.6)])] == ["service CPU"]
    assert stall_events(moments, 1.2, 0.5) == []


def test_only_the_role_whose_cpu_rose_the_most_is_named():
    # The server spins a core; the generator beside it waited for its CPU more than usual.
    moments = [
        Moment(k, k + 1, {"service CPU": 1.0 if k == 3 else 0.1, "generator CPU": 0.7 if k == 3 else 0.3})
        for k in range(6)
    ]
    assert [name for name, _, _ in stall_events(moments, 3.0, 1.0)] == ["service CPU"]


def test_the_stall_line_carries_what_stood_out_and_its_evidence():
    seconds = [Second(100, 100, 0, 4.0) for _ in range(10)]
    seconds[3] = Second(100, 20, 0, 950.0)
    seconds[4] = Second(100, 180, 0, 150.0)
    moments = each_second("iowait", [0.01, 0.02, 0.01, 0.6, 0.02, 0.01, 0.01, 0.02, 0.01, 0.01])
    found = diagnose(seconds, 100, 50.0, moments=moments)
    assert found.kind == "stall"
    assert found.line.endswith(
        "; in those seconds iowait 60% of the host's CPU (median 1% in the other seconds)"
    )
    assert found.evidence["in_stall.iowait"] == 0.6
