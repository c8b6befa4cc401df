"""The results as rounds, engines and runs, and the comparison table (`dbladder.report.runs`)."""

from __future__ import annotations

from typing import Any

import pytest
from report_support import fake_result, texts, users_result, with_ceiling

from dbladder.report.runs import FEW_RUNS, comparison_table, rounds_of, verdict
from dbladder.result.levels import ceiling_of


def test_a_clear_gap_between_engines_is_named_with_its_size():
    postgres = [with_ceiling(fake_result("postgresql", (1, 1, 1)), 3) for _ in range(3)]
    mariadb = [with_ceiling(fake_result("mariadb", (1, 1, 1)), 1) for _ in range(3)]
    for run in postgres:
        run["levels"][-1]["passed"] = False  # 1,000 req/s held: levels 1-2 pass, level 3 fails
        run["levels"][-1]["reasons"] = ["p95 99.0 ms is not under 50 ms"]
        run["ceiling_rps"] = ceiling_of(run["levels"])
    md, _ = texts([*postgres, *mariadb])
    assert "| quick: 20 % writes, 500 to 1,500 req/s | 3 | 1,000 / 1,000 / 1,000 req/s (median 1,000) " in md
    assert "500 / 500 / 500 req/s (median 500) | PostgreSQL 15.20 +100 % |" in md
    assert "PostgreSQL 15.20 held 100 % more than MariaDB 10.11.19 (1,000 against 500 req/s)." in md
    assert "**One run.**" not in md


def test_runs_that_overlap_are_not_a_result_and_the_spread_is_a_caveat():
    a = [with_ceiling(fake_result("postgresql", (1, 1, 1)), n) for n in (1, 3, 3)]
    b = [with_ceiling(fake_result("mariadb", (1, 1, 1)), n) for n in (2, 2, 3)]
    md, _ = texts([*a, *b])
    # MariaDB held the top step in one run: its limit may be higher than PostgreSQL's.
    assert (
        "| cannot tell: MariaDB 10.11.19 held the top step in 1 of 3 runs, so its limit lies higher |" in md
    )
    assert "cannot be ordered" in md
    assert "**Spread larger than the gap.**" in md
    # Without the bounds: 500 / 1,000 / 1,000 against 1,000 / 1,000 / 500 cannot be told apart.
    a = [with_ceiling(fake_result("postgresql", (1, 1, 1)), n) for n in (1, 2, 2)]
    b = [with_ceiling(fake_result("mariadb", (1, 1, 1)), n) for n in (2, 2, 1)]
    md, _ = texts([*a, *b])
    assert "| cannot tell apart (" in md
    assert "the runs vary too much to tell them apart" in md
    assert "How the difference is judged: An engine is named ahead only when Welch's t-test" in md


def test_a_ladder_that_never_failed_is_a_lower_bound_and_a_first_failure_is_below_the_start():
    held = fake_result("sqlite", (1, 1, 1))
    failed = with_ceiling(fake_result("postgresql", (1, 1, 1)), 0)
    md, _ = texts([held, failed])
    assert "≥ 1,500 req/s" in md
    assert "< 500 req/s" in md
    assert "**Limit not reached.** SQLite 3.54.1 held every level it climbed, up to 1,500 req/s" in md
    assert "**No level held.** PostgreSQL 15.20 failed its first level (500 req/s)" in md
    assert "**One run.** Each figure for PostgreSQL 15.20 and SQLite 3.54.1 comes from a single run." in md


def test_rounds_with_different_pass_marks_are_not_compared():
    strict = fake_result("postgresql", (1, 1, 1), pass_mark={"p95_ms": 5.0, "max_fail_pct": 1.0})
    rounds = rounds_of([fake_result("sqlite", (1, 1, 1)), strict])
    assert len(rounds) == 2
    assert rounds[0].title != rounds[1].title
    assert "pass mark p95 < 5 ms" in rounds[1].title


def test_three_engines_are_each_measured_against_the_best():
    best = with_ceiling(fake_result("postgresql", (1, 1, 1)), 2)  # holds 1,000
    half = with_ceiling(fake_result("mariadb", (1, 1, 1)), 1)  # holds 500
    none = with_ceiling(fake_result("sqlite", (1, 1, 1)), 0)  # holds nothing
    md, _ = texts([none, half, best])
    # One run each: no spread to judge the gaps by, so the column cannot call a winner.
    assert (
        "| cannot tell from fewer than 3 runs (best: PostgreSQL 15.20; MariaDB 10.11.19 -50 %; "
        "SQLite 3.54.1: none) |" in md
    )


def test_with_one_run_of_an_engine_the_difference_cannot_tell():
    postgres = with_ceiling(fake_result("postgresql", (1, 1, 1)), 2)  # holds 1,000
    mariadb = with_ceiling(fake_result("mariadb", (1, 1, 1)), 1)  # holds 500
    md, page = texts([postgres, mariadb])
    assert "| cannot tell from fewer than 3 runs (PostgreSQL 15.20 +100 %) |" in md
    assert "| PostgreSQL 15.20 +100 % |" not in md
    assert "One run cannot tell a gap of this size from run-to-run noise." in md
    assert "cannot tell from fewer than 3 runs (PostgreSQL 15.20 +100 %)" in page
    # Three runs of one engine do not make up for one run of the other.
    more = [with_ceiling(fake_result("postgresql", (1, 1, 1)), 2) for _ in range(3)]
    table = comparison_table([*more, mariadb])
    assert table[1][-1] == "cannot tell from fewer than 3 runs (PostgreSQL 15.20 +100 %)"
    # Users rounds, too.
    table = comparison_table(
        [users_result("postgresql", failing_from=2), users_result("mariadb", failing_from=1)]
    )
    assert table[1][-1] == "cannot tell from fewer than 3 runs (PostgreSQL 15.20 +100 %)"


def test_the_comparison_table_calls_overlapping_runs_about_the_same_and_a_clear_gap_a_win():
    overlap = [
        *(with_ceiling(fake_result("postgresql", (1, 1, 1)), n) for n in (1, 3, 3)),
        *(with_ceiling(fake_result("mariadb", (1, 1, 1)), n) for n in (2, 2, 3)),
    ]
    assert comparison_table(overlap) == [
        ["test", "runs", "PostgreSQL 15.20", "MariaDB 10.11.19", "difference"],
        [
            "quick: 20 % writes, 500 to 1,500 req/s",
            "3",
            "500 / ≥ 1,500 / ≥ 1,500 req/s (median 1,500)",
            "1,000 / 1,000 / ≥ 1,500 req/s (median 1,000)",
            "cannot tell: MariaDB 10.11.19 held the top step in 1 of 3 runs, so its limit lies higher",
        ],
    ]
    gap = [
        *(with_ceiling(fake_result("postgresql", (1, 1, 1)), 2) for _ in range(3)),
        *(with_ceiling(fake_result("mariadb", (1, 1, 1)), 1) for _ in range(3)),
    ]
    assert comparison_table(gap)[1][2:] == [
        "1,000 / 1,000 / 1,000 req/s (median 1,000)",
        "500 / 500 / 500 req/s (median 500)",
        "PostgreSQL 15.20 +100 %",
    ]


def test_three_engines_that_all_held_the_top_step_have_no_best():
    every = [
        with_ceiling(fake_result(engine, (1, 1, 1)), 3)
        for engine in ("postgresql", "mariadb", "sqlite")
        for _ in range(2)
    ]
    assert comparison_table(every)[1][-1] == "all held the top step"


def test_the_comparison_table_of_users_rounds_compares_the_rate_at_the_level_held_and_the_peak():
    def runs(engine: str, at_40: tuple[float, ...], failing_from: int) -> list[dict[str, Any]]:
        return [
            users_result(engine, (at_40[i] / 2, at_40[i], at_40[i] + 10), failing_from=failing_from)
            for i in range(3)
        ]

    overlap = [*runs("postgresql", (390, 392, 395), 2), *runs("mariadb", (388, 391, 396), 2)]
    table = comparison_table(overlap)
    assert table[1] == [
        "users-read: 5 % writes, 20 to 80 users",
        "3",
        "40 users: 390 / 392 / 395 req/s (median 392)",
        "40 users: 388 / 391 / 396 req/s (median 391)",
        "about the same (-3 to +3 %)",
    ]
    assert table[2][0] == "users-read: 5 % writes, 20 to 80 users, peak"
    assert table[2][-1].startswith("about the same (")
    gap = [*runs("postgresql", (390, 392, 395), 2), *runs("mariadb", (190, 196, 198), 1)]
    table = comparison_table(gap)
    assert table[1][3] == "20 users: 95 / 98 / 99 req/s (median 98)"
    assert table[1][-1] == "PostgreSQL 15.20 +300 %"
    md, _ = texts(gap)
    assert "At the highest users level each held PostgreSQL 15.20 sustained 300 % more than MariaDB" in md


@pytest.mark.slow
def test_two_identical_sqlite_databases_with_two_runs_each_are_never_called_a_win():
    # Every way two runs each of two identical engines can end on a 3-level ladder: whatever the
    # figures, with 2 runs the rule names no winner, in the table and in the sentences.
    import itertools

    for a, b in itertools.product(itertools.product((1, 2, 3), repeat=2), repeat=2):
        results = [with_ceiling(fake_result("sqlite", (1, 1, 1)), n) for n in a]
        results += [with_ceiling(fake_result("sqlite", (1, 1, 1)), n) for n in b]
        for result, label in zip(results, ("shop-a.db",) * 2 + ("shop-b.db",) * 2, strict=True):
            result["label"] = label
        (round_,) = rounds_of(results)
        assert not verdict(*round_.groups).named
        difference = comparison_table(results)[1][-1]
        assert difference.startswith((FEW_RUNS, "both held")), difference
        md, _ = texts(results)
        assert "more than" not in md, (a, b)
