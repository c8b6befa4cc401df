"""The result table of a comparison: each engine's runs and the difference (`report.result_table`)."""

from __future__ import annotations

from typing import Any

from report_support import fake_result, texts, users_result, with_ceiling

from dbladder.report.result_table import comparison_table


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
