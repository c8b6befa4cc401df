"""The closed model's users rounds and spikes in the reports (`dbladder.report.plan_views.users_view`)."""

from __future__ import annotations

import re

from report_support import caveat_leads, levels_table, spike_result, texts, users_result


def test_a_users_round_is_read_in_users_with_the_rate_they_achieved():
    result = users_result(failing_from=2)
    md, page = texts([result])
    assert md.startswith("# SQLite 3.54.1: held 40 users, 390 req/s\n")
    assert "_users-read: 5 % writes, 20 to 80 users (2026-01-02)_" in md
    assert "| users-read: 5 % writes, 20 to 80 users | 1 | 40 users: 390 req/s |" in md
    assert "| users-read: 5 % writes, 20 to 80 users, peak | 1 | 700 req/s |" in md
    assert (
        "SQLite 3.54.1 held 40 users at 390 req/s; the next level, 80 users, failed "
        "(p95 99.0 ms is not under 50 ms). Its peak was 700 req/s, at 80 users." in md
    )
    rows = levels_table(md)
    assert [row["users"] for row in rows] == ["20", "40", "80"]
    assert [row["could send req/s"] for row in rows] == ["200", "400", "800"]
    assert [row["achieved req/s"] for row in rows] == ["195", "390", "700"]
    assert "offered req/s" not in md
    assert "| users | 20, 40, 80 users; each level's users arrive over 1 s, then it is held 3 s;" in md
    assert "| think time | 50 to 150 ms between an answer and the user's next request, uniform;" in md
    assert "| ladder |" not in md
    leads = caveat_leads([result])
    assert "80 users send at most 800 req/s" in leads["Think time limits the rate."]
    assert "Precision is one users level." in leads and "Precision is one step." not in leads
    assert "Each level was held 3 s" in leads["Short holds."]
    # The plots: x is users, the ceiling is marked at the users level held.
    throughput = page.split('data-plot="throughput"', 1)[1].split("</figure>", 1)[0]
    assert re.findall(r'data-key="achieved_rps".*', throughput)
    assert re.findall(r'class="point" data-x="([^"]+)" data-y="([^"]+)"', throughput) == [
        ("20", "195"),
        ("40", "390"),
        ("80", "700"),
    ]
    assert ">users</text>" in throughput and "Achieved rate against users" in throughput
    assert page.count('data-mark="ceiling" data-x="40"') == 1 + 3 + 1 + 3
    assert "what the users could send" in throughput


def test_a_users_round_that_held_every_level_is_a_lower_bound():
    result = users_result()
    md, _ = texts([result])
    assert md.startswith("# SQLite 3.54.1: held 80 users, 700 req/s (no level failed)\n")
    assert "| ≥ 80 users: 700 req/s |" in md
    assert "held every users level up to 80 users (700 req/s at the top): no level failed" in md
    assert "held every level it ran, up to 80 users: the limit lies higher; add users" in md


def test_a_spike_round_shows_its_three_phases_and_the_recovery():
    md, page = texts([spike_result()])
    assert md.startswith("# SQLite 3.54.1: 1,500 req/s at the spike, p95 back within 20 % after 2 s\n")
    assert "| spike: 20 % writes, 20 → 200 → 20 users | 1 | 1,500 req/s |" in md
    assert "| spike: 20 % writes, 20 → 200 → 20 users, p95 recovery | 1 | 2 s |" in md
    assert "SQLite 3.54.1 answered 195, 1,500 and 198 req/s before, at and after the spike" in md
    assert "| SQLite 3.54.1 | spike | 200 | 1,500 |" in md
    assert "| SQLite 3.54.1 | after | 20 | 198 |" in md and md.count("| SQLite 3.54.1 | before |") == 1
    # A spike has no ceiling to mark: its plan goes back down.
    assert 'data-mark="ceiling"' not in page and "a run's ceiling" not in page
    md, _ = texts([spike_result(recovery=None)])
    assert "p95 did not recover: never back within 20 % of its pre-spike value" in md
    assert "| spike: 20 % writes, 20 → 200 → 20 users, p95 recovery | 1 | did not recover |" in md


def test_a_three_phase_plan_that_is_no_spike_ignores_the_spike_block():
    # The runner attaches a spike block (with a note) to any three-phase closed run.
    result = users_result(spike={"recovery_seconds": None, "note": "a spike needs a phase before and after"})
    md, _ = texts([result])
    assert "recovery" not in md and "| users-read: 5 % writes, 20 to 80 users, peak |" in md
