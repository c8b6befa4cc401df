"""The results as rounds, engines and runs, and the comparison table (`dbladder.report.runs`)."""

from __future__ import annotations

import pytest
from report_support import fake_result, texts, with_ceiling

from dbladder.report.result_table import comparison_table
from dbladder.report.runs import FEW_RUNS, rounds_of, verdict
from dbladder.result.level_rows import ceiling_of


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


def test_no_winner_is_named_on_levels_whose_p95_interval_holds_the_pass_mark():
    def runs(engine: str, held_up_to: int, doubtful: dict | None) -> list[dict]:
        found = []
        for _ in range(3):
            run = with_ceiling(fake_result(engine, (1, 1, 1)), held_up_to)
            if doubtful is not None:  # the level held at the ceiling: p95 40 ms, maybe 30 to 60 ms
                run["levels"][held_up_to - 1] |= doubtful
            found.append(run)
        return found

    doubtful = {"p95_ms": 40.0, "p95_interval": {"low_ms": 30.0, "high_ms": 60.0, "n": 90, "coverage": 0.96}}
    md, _ = texts([*runs("postgresql", 2, doubtful), *runs("mariadb", 1, None)])
    assert "PostgreSQL 15.20 is ahead by its runs (1,000 against 500 req/s), but no winner is named." in md
    assert (
        "No winner can rest on a level whose p95 interval holds the pass mark (PostgreSQL 15.20, run 1: "
        "its level at 1,000 req/s held with a p95 of 40 ms whose 95 % interval, 30-60 ms, holds the 50 ms "
        "pass mark"
    ) in md
    assert "cannot tell: a level's p95 interval holds the pass mark" in md
    assert "held 100 % more" not in md
    # The same gap with a narrow interval names the winner.
    narrow = {"p95_ms": 40.0, "p95_interval": {"low_ms": 38.0, "high_ms": 42.0, "n": 9000, "coverage": 0.95}}
    md, _ = texts([*runs("postgresql", 2, narrow), *runs("mariadb", 1, None)])
    assert "PostgreSQL 15.20 held 100 % more than MariaDB 10.11.19 (1,000 against 500 req/s)." in md
    # One run each: no winner anyway, and the verdict still says which level is not settled.
    md, _ = texts([runs("postgresql", 2, doubtful)[0], runs("mariadb", 1, None)[0]])
    assert "but no winner is named." in md and "holds the 50 ms pass mark" in md
