"""The diagnosis of a level from its seconds and its resources, on series worked out on paper.

Every stalled series below is a server at a steady 100 requests due a second (answering each in
4 ms) that stops answering at s for L seconds, then answers its backlog at once. Then:
  * the second holding s answers only what was due before it: 100 * (s - k);
  * the second holding the stall's end answers the backlog and the rest of its own second;
  * the p95 of a second is set by the 5 requests that waited longest: in the second holding s,
    those due in [s, s + 0.05), which waited L down to L - 0.05 s; in a second k wholly inside
    the stall, those due in [k, k + 0.05), which waited s + L - k down to that less 0.05 s; in
    the second holding the end, those due at its start, which waited (s + L - k) - 0.05 s.
"""

from __future__ import annotations

import pytest

from dbladder.result.diagnosis import Resources, RoleCpu, Second, Users, diagnose

PASS_MS = 50.0


def steady(count: int) -> list[Second]:
    return [Second(100, 100, 0, 4.0) for _ in range(count)]


def test_a_one_second_stall_is_located_and_sized():
    # s = 6.2, L = 1.0: second 6 answers 20 (due 6.0-6.2), its p95 is 1.0 - 0.05 = 0.95 s; the
    # backlog (due 6.2-7.2) comes at 7.2 with 80 more of second 7, whose p95 is 0.2 - 0.05 s.
    seconds = [*steady(6), Second(100, 20, 0, 950.0), Second(100, 180, 0, 150.0), *steady(2)]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall"
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(6.2, abs=0.5)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(1.0, abs=0.3)
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(6.2)  # on paper, exactly
    assert (
        diagnosis.line
        == "a stall of 1.0 s at 6.2 s into the level; p95 over the other 8 s was at most 4.0 ms"
    )


def test_the_issue_s_stall_of_1_4_s_at_6_2_s():
    # s = 6.2, L = 1.4: second 6 answers 20, p95 1.35 s; the end, 7.6, is inside second 7, which
    # answers the backlog of 140 and its last 40, p95 0.6 - 0.05 s.
    seconds = [*steady(6), Second(100, 20, 0, 1350.0), Second(100, 180, 0, 550.0), *steady(2)]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall"
    assert diagnosis.line.startswith("a stall of 1.4 s at 6.2 s into the level")


def test_a_stall_over_three_seconds_is_still_one_stall():
    # s = 3.5, L = 2.5: second 3 answers 50 (p95 2.45 s), 4 and 5 answer nothing (p95 of the
    # requests due at their starts: 2.0 - 0.05 and 1.0 - 0.05 s), the backlog comes at 6.0.
    seconds = [
        *steady(3),
        Second(100, 50, 0, 2450.0),
        Second(100, 0, 0, 1950.0),
        Second(100, 0, 0, 950.0),
        Second(100, 350, 0, 4.0),
        *steady(3),
    ]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall"
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(3.5)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(2.5)


def test_a_one_second_stall_across_a_seconds_boundary_in_a_6_s_level_is_a_stall():
    # s = 2.5, L = 1.0, as a real server stalled (tests/result/test_diagnosis_known_servers.py):
    # seconds 2 and 3 fail, a third of the level, though the stall is a sixth of it. Second 2
    # answers the 50 due before the stall, its longest wait 1.0 s; the backlog comes at 3.5 with
    # second 3's 50, the longest of its waits 0.5 s. Counted by failing seconds it was "cannot tell".
    quiet = [Second(100, 100, 0, 4.0, max_ms=4.5)] * 2
    seconds = [
        *quiet,
        Second(100, 50, 0, 950.0, max_ms=1000.0),
        Second(100, 150, 0, 450.0, max_ms=500.0),
        *quiet,
    ]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall", diagnosis.line
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(2.5, abs=0.05)
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(1.0, abs=0.05)


def test_a_stall_as_long_as_most_of_the_level_is_not_a_stall():
    # The same shape, 3 s long in a 6 s level: four seconds fail, three counted, half the level.
    seconds = [
        Second(100, 100, 0, 4.0, max_ms=4.5),
        Second(100, 50, 0, 2950.0, max_ms=3000.0),
        Second(100, 0, 0, 2450.0, max_ms=2500.0),
        Second(100, 0, 0, 1450.0, max_ms=1500.0),
        Second(100, 350, 0, 450.0, max_ms=500.0),
        Second(100, 100, 0, 4.0, max_ms=4.5),
    ]
    assert diagnose(seconds, 100, PASS_MS).kind != "stall"


def test_a_short_stall_inside_one_second_says_how_far_off_its_start_can_be():
    # s = 6.2, L = 0.5: second 6 answers all its 100 in the end (the backlog at 6.7), so the counts
    # cannot place s; its p95 is 0.45 s, so L = 0.5 and s lies in [6.0, 6.5]: 6.25, within 0.25 s.
    seconds = [*steady(6), Second(100, 100, 0, 450.0), *steady(3)]
    diagnosis = diagnose(seconds, 100, PASS_MS)
    assert diagnosis.kind == "stall"
    assert diagnosis.evidence["stall_length_s"] == pytest.approx(0.5)
    assert diagnosis.evidence["stall_start_s"] == pytest.approx(6.25)
    assert diagnosis.evidence["stall_start_within_s"] == pytest.approx(0.25)
    assert abs(diagnosis.evidence["stall_start_s"] - 6.2) <= 0.5


def fifo_above_capacity() -> list[Second]:
    # Capacity 500 req/s offered 600: the backlog grows by 100 a second, the request due at t
    # waits 0.2 t, and the 5 % of second k that waited longest were due last: p95 = 0.2 (k + 0.95).
    return [Second(600, 500, 0, 200 * (k + 0.95)) for k in range(10)]


def test_a_fifo_server_above_its_capacity_is_saturation_not_a_stall():
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS)
    assert diagnosis.kind == "saturation"
    assert diagnosis.resource is None
    assert diagnosis.evidence["answered_rps"] == 500
    assert diagnosis.line == (
        "saturation (answered 500 req/s of 600 offered, p95 from 190 ms to 1,990 ms); "
        "which resource ran out cannot be told: none measured"
    )


def test_saturation_names_the_resource_furthest_past_its_bound():
    resources = Resources(
        cpu={"service": RoleCpu(0.97, 1.0), "database": RoleCpu(0.3, 2.0), "host": RoleCpu(1.4, 2.0)},
        pool_wait_share=0.1,
    )
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS, resources)
    assert (diagnosis.kind, diagnosis.resource) == ("saturation", "service CPU")
    assert diagnosis.line.startswith("the service CPU at its limit: 0.97 of 1 cores (answered 500 req/s")


@pytest.mark.parametrize(
    ("resources", "named", "shown"),
    [
        (
            Resources(pool_wait_share=0.92, cpu={"service": RoleCpu(0.5, 1.0)}),
            "pool",
            "92% of a request's time",
        ),
        # The queue's share (0.8 of a bound of 0.5: 1.6) is further past its bound than the commits'
        # (3,100 / 3,200 = 0.97 of a bound of 0.8: 1.21): the queue is named, the disk's rate beside it.
        (
            Resources(
                writer_queue_share=0.8,
                writer_queue_mean_ms=9.1,
                commits_per_second=3100,
                fsyncs_per_second=3200,
            ),
            "writer queue",
            "writes queued behind the single writer: 80% of a write's time (9.1 ms a write); "
            "3,100 commits/s against an fsync rate of 3,200/s",
        ),
        (
            Resources(commits_per_second=3100, fsyncs_per_second=3200),
            "writer at the disk's fsync rate",
            "3,100 commits/s against an fsync rate of 3,200/s",
        ),
        (
            Resources(lock_wait_share=0.85, cpu={"database": RoleCpu(0.2, 2.0)}),
            "lock waits",
            "85% of the active",
        ),
        (
            Resources(lock_wait_share=0.85, lock_event=("Lock:transactionid", 0.8)),
            "lock waits",
            "85% of the active sessions waiting for a lock (wait event Lock:transactionid: 80%)",
        ),
        (Resources(iowait=0.45), "disk", "iowait 45%"),
        # A writer committing at the disk's fsync rate on an otherwise idle host: the host's
        # iowait (0.45 of a bound of 0.2: 2.25) is those syncs waited for, and reads further past
        # its bound than the queue (1.8); the writer is named, the disk's rate beside it.
        (
            Resources(
                writer_queue_share=0.9,
                commits_per_second=52,
                fsyncs_per_second=53,
                iowait=0.45,
            ),
            "writer queue",
            "52 commits/s against an fsync rate of 53/s",
        ),
    ],
)
def test_each_resource_at_its_limit_is_the_one_named(resources, named, shown):
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS, resources)
    assert diagnosis.resource == named
    assert shown in diagnosis.line


def test_no_resource_past_its_bound_is_said_with_the_closest_three():
    resources = Resources(
        cpu={"service": RoleCpu(0.6, 1.0), "database": RoleCpu(0.5, 2.0)}, pool_wait_share=0.2, iowait=0.01
    )
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS, resources)
    assert (diagnosis.kind, diagnosis.resource) == ("saturation", None)
    # Each one's figure and the bound it stayed under: why it is not the one that ran out.
    assert diagnosis.line.endswith(
        "which resource ran out cannot be told: none reached its bound: service CPU 0.60 of 1 cores "
        "(0.67 of its bound); pool: 20% of a request's time waiting for a connection (0.40 of its "
        "bound); database CPU 0.50 of 2 cores (0.28 of its bound); disk: iowait 1% of the host's CPU "
        "(0.05 of its bound)"
    )


def test_a_generator_that_fell_behind_is_named_before_anything_it_did_to_the_server():
    resources = Resources(schedule_lag_p99_ms=40.0, dropped=250, cpu={"service": RoleCpu(0.99, 1.0)})
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS, resources)
    assert diagnosis.kind == "generator"
    assert diagnosis.line == (
        "the generator, not the system under test: schedule lag p99 40.0 ms (above 2 ms); "
        "250 requests dropped with every connection busy"
    )


def test_a_generator_that_sent_less_than_offered_is_named():
    seconds = [Second(450, 450, 0, 80.0) for _ in range(10)]
    diagnosis = diagnose(seconds, 600, PASS_MS)
    assert diagnosis.kind == "generator"
    assert "sent 450 req/s of 600 offered" in diagnosis.line


def test_failures_scattered_over_the_level_cannot_be_told():
    seconds = [Second(100, 100, 0, 80.0 if k % 2 == 0 else 10.0) for k in range(10)]
    diagnosis = diagnose(seconds, 100, PASS_MS, Resources(pool_wait_share=0.3))
    assert diagnosis.kind == "cannot tell"
    assert diagnosis.line.startswith("cannot tell: seconds 0, 2, 4, 6, 8 of 10 failed")
    assert diagnosis.line.endswith(
        "closest: pool: 30% of a request's time waiting for a connection (0.60 of its bound)"
    )


def test_a_level_offered_about_its_capacity_with_a_resource_past_its_bound_is_saturation():
    # A CPU-bound service offered its capacity: its queue comes and goes, every answer comes in
    # the level (no backlog that grew, no timeouts), 7 of 10 seconds fail, the service wanted
    # 1.04 of its 1 core. Without that figure it cannot be told from scattered failures.
    seconds = [Second(300, 300, 0, 120.0 if k % 3 else 20.0) for k in range(10)]
    busy = Resources(cpu={"service": RoleCpu(0.98, 1.0, 0.06)})
    found = diagnose(seconds, 300, PASS_MS, busy)
    assert (found.kind, found.resource) == ("saturation", "service CPU")
    assert found.line.startswith("the service CPU at its limit: 0.98 of 1 cores, and 0.06 more waiting")
    assert diagnose(seconds, 300, PASS_MS).kind == "cannot tell"


def test_failing_seconds_at_the_very_end_of_an_older_result_are_neither_a_stall_nor_saturation():
    # No passing second after them and no max per second (a result from before it was kept): a
    # stall or the onset of saturation cannot be told apart. With each second's max they can
    # (test_stall_location.py: a stall's longest wait is its first, a backlog's its last).
    seconds = [*steady(8), Second(100, 10, 0, 900.0), Second(100, 0, 0, 1900.0)]
    assert diagnose(seconds, 100, PASS_MS).kind == "cannot tell"


def test_failures_count_as_well_as_latency():
    seconds = [*steady(4), Second(100, 60, 40, 4.0), *steady(5)]
    assert diagnose(seconds, 100, PASS_MS).kind == "stall"


def test_a_level_whose_every_second_passed_passed():
    diagnosis = diagnose(steady(10), 100, PASS_MS)
    assert (diagnosis.kind, diagnosis.line) == ("passed", "passed: every second's p95 under 50 ms")
    assert diagnosis.to_dict()["kind"] == "passed"


def test_no_seconds_cannot_be_told():
    assert diagnose([], 100, PASS_MS).kind == "cannot tell"


def test_a_schedule_lag_far_below_the_pass_mark_is_not_what_failed_the_level():
    # 8 ms late at p99 on a busy machine cannot push a p95 past 50 ms: the server's backlog did.
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS, Resources(schedule_lag_p99_ms=8.0))
    assert diagnosis.kind == "saturation", diagnosis.line


def test_drops_behind_a_server_that_answers_slowly_are_its_saturation_not_the_generator():
    # Every connection busy because the server took seconds to answer what it was sent: the drops
    # and the sends they cut short are the server's saturation, whose resource is then named.
    resources = Resources(dropped=520, sent_p95_ms=4_200.0, cpu={"service": RoleCpu(0.93, 1.0)})
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS, resources)
    assert (diagnosis.kind, diagnosis.resource) == ("saturation", "service CPU")
    # The same drops in front of a server that answered what it was sent in 3 ms: the generator.
    held_back = Resources(dropped=520, sent_p95_ms=3.0)
    assert diagnose(fifo_above_capacity(), 600, PASS_MS, held_back).kind == "generator"


def test_a_role_that_wanted_more_cpu_than_it_got_is_at_its_limit():
    # A worker used 0.6 of its one core and waited 0.38 more for a CPU on a machine busy with
    # other work: it wanted 0.98 of a core. The host is at its limit too, but the role is the finding.
    resources = Resources(cpu={"service": RoleCpu(0.6, 1.0, 0.38), "host": RoleCpu(2.0, 2.0)})
    diagnosis = diagnose(fifo_above_capacity(), 600, PASS_MS, resources)
    assert (diagnosis.kind, diagnosis.resource) == ("saturation", "service CPU")
    assert diagnosis.line.startswith(
        "the service CPU at its limit: 0.60 of 1 cores, and 0.38 more waiting for a CPU"
    )
    # No role at its own limit: the host is named.
    quiet = Resources(cpu={"service": RoleCpu(0.3, 1.0), "host": RoleCpu(2.0, 2.0)})
    assert diagnose(fifo_above_capacity(), 600, PASS_MS, quiet).resource == "host CPU"


def closed_at_capacity() -> list[Second]:
    # 120 users thinking 0.1 s on average in front of a FIFO server of capacity 500: it answers
    # 500 a second, and each answer takes N / X - Z = 120 / 500 - 0.1 = 0.14 s (Little's law),
    # steadily: the closed loop builds no backlog, so the latency settles instead of climbing.
    return [Second(500, 500, 0, 140.0) for _ in range(5)]


def test_a_closed_level_whose_throughput_stayed_flat_while_the_users_grew_is_saturation():
    # The phase before: 40 users, 392 a second (40 / 0.102), answered in 2 ms.
    users = Users(120, previous_users=40, previous_rps=392.0, previous_p95_ms=2.0)
    diagnosis = diagnose(closed_at_capacity(), 1200, PASS_MS, users=users)
    assert (diagnosis.kind, diagnosis.resource) == ("saturation", None)
    assert diagnosis.line.startswith(
        "saturation (throughput flat while the users grew: 40 to 120 users, 392 to 500 req/s, "
        "p95 2 to 140 ms)"
    )
    # Offered 1,200 (users / think time), sent 500: no sign of the generator in a closed model.
    assert diagnosis.evidence["answered_rps"] == 500.0


def test_a_closed_level_whose_throughput_grew_with_its_users_is_not_saturation():
    # Three times the users, nearly three times the answers: slow, but not flat.
    users = Users(120, previous_users=40, previous_rps=180.0, previous_p95_ms=120.0)
    assert diagnose(closed_at_capacity(), 1200, PASS_MS, users=users).kind == "cannot tell"


def test_a_first_closed_phase_is_saturation_only_with_a_resource_past_its_bound():
    alone = diagnose(closed_at_capacity(), 1200, PASS_MS, users=Users(120))
    assert alone.kind == "cannot tell"
    assert "nor throughput flat while the users grew" in alone.line
    busy = Resources(cpu={"service": RoleCpu(0.97, 1.0)})
    found = diagnose(closed_at_capacity(), 1200, PASS_MS, busy, users=Users(120))
    assert (found.kind, found.resource) == ("saturation", "service CPU")
    assert "(at 120 users: 500 req/s, p95 140 ms)" in found.line


def test_a_backlog_already_at_the_timeout_is_saturation():
    # Writes queued to the 5 s timeout before the window opened: each second answers what it is
    # sent (half of it timeouts), its p95 flat at the timeout; the failures are what fell short.
    seconds = [Second(600, 600, 300, 4_990.0) for _ in range(6)]
    resources = Resources(writer_queue_share=0.99)
    diagnosis = diagnose(seconds, 600, PASS_MS, resources)
    assert (diagnosis.kind, diagnosis.resource) == ("saturation", "writer queue")


def test_failures_that_were_answers_are_errors_whatever_the_rate():
    # An app that redirects every page to https (a proxy header missing): each request answered
    # at once, none a success. No stall, no resource: the answers themselves failed the level.
    seconds = [Second(2, 2, 2, 5000.0) for _ in range(10)]
    found = diagnose(seconds, 2, PASS_MS, failures={"unexpected": 20})
    assert found.kind == "errors"
    assert found.line.startswith(
        "errors: 20 of 20 requests sent were answered with a status they do not count as a success "
        "(a status outside the request's success 20)"
    )
    assert found.evidence == {"refused": 20.0, "sent": 20.0}


def test_answered_errors_within_the_mark_or_outnumbered_by_timeouts_are_not_the_cause():
    # 1 % of answers refused is what the mark allows; a level that mostly timed out failed on
    # time, its few 503s a symptom of the same backlog.
    seconds = [Second(100, 100, 1, 4.0) for _ in range(10)]
    assert diagnose(seconds, 100, PASS_MS, failures={"5xx": 10}).kind == "passed"
    backlog = [Second(100, 40, 60, 5000.0) for _ in range(10)]
    found = diagnose(backlog, 100, PASS_MS, failures={"timeout": 500, "5xx": 100})
    assert found.kind != "errors", found.line
