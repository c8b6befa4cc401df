"""Reports from made-up results: verdicts, caveats, machine figures, plots, the loader's errors.

The results here are built the way the runner builds them (level rows from `level_row` over
generator-shaped snapshots) and checked against the shipped schema first, so a made-up result
cannot drift from a real one unnoticed.
"""

from __future__ import annotations

import copy
import csv
import json
import re
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from cli_support import dbladder as run_dbladder

from dbladder.errors import CorruptBundle, MissingBundle, UnknownBundleVersion
from dbladder.histogram import Histogram
from dbladder.outcomes import OUTCOMES
from dbladder.report import document, html, markdown, terminal
from dbladder.report.bundle import build_reports, load_bundle, write_bundle
from dbladder.report.caveats import caveats
from dbladder.report.runs import FEW_RUNS, comparison_table, rounds_of, verdict
from dbladder.report.settings import settings_file
from dbladder.report.svg import Axis, Chart, Point, linear_ticks, log_ticks
from dbladder.result.levels import ceiling_of, level_row
from dbladder.result.passmark import PassMark
from dbladder.result.schema import RESULT_SCHEMA, problem

MARK = PassMark(50.0, 1.0)


def snapshot(
    index: int, rate: float, latency_ms: float, failed: int = 0, hold: float = 4.0
) -> dict[str, Any]:
    """A merged generator snapshot of one level: 100 answers around `latency_ms`, `failed` 5xx."""
    from_due, from_send, lag = Histogram(), Histogram(), Histogram()
    for i in range(100):
        value = int(latency_ms * 1000 * (0.5 + i / 100))
        from_due.record(value)
        from_send.record(value // 2)
        lag.record(100)
    outcomes = dict.fromkeys(OUTCOMES, 0)
    outcomes["2xx"] = 100 - failed
    outcomes["5xx"] = failed
    return {
        "index": index,
        "rate": rate,
        "state": "finished",
        "start": index * hold,
        "hold": hold,
        "warmup": 1.0,
        "cpu_seconds": 0.5,
        "cpu_share": 0.25,
        "latency_from_due": from_due.to_dict(),
        "latency_from_send": from_send.to_dict(),
        "schedule_lag": lag.to_dict(),
        "outcomes": outcomes,
    }


ENGINES = {
    "sqlite": {
        "engine": "sqlite",
        "url": "sqlite:///shop.db",
        "server_version": "3.54.1",
        "driver": "apsw",
        "driver_version": "3.54.1.0",
        "transport": "in-process file /tmp/shop.db",
        "isolation": "serializable",
        "pool_size": 100,
        "prepared_statements": "apsw statement cache",
        "durable": True,
        "durability": {"journal_mode": "WAL", "synchronous": "FULL"},
        "durability_note": "",
        "settings": {"busy_timeout": "5000", "cache_size": "-10240"},
    },
    "postgresql": {
        "engine": "postgresql",
        "url": "postgresql://postgres@127.0.0.1:5432/shop",
        "server_version": "15.20 (Debian 15.20-0+deb12u1)",
        "driver": "asyncpg",
        "driver_version": "0.32.0",
        "transport": "tcp 127.0.0.1:5432",
        "isolation": "read committed",
        "pool_size": 100,
        "prepared_statements": "server-side",
        "durable": True,
        "durability": {"fsync": "on", "synchronous_commit": "on"},
        "durability_note": "",
        "settings": {"shared_buffers": "128MB", "max_connections": "100"},
    },
    "mariadb": {
        "engine": "mariadb",
        "url": "mariadb://root@127.0.0.1:3306/shop",
        "server_version": "10.11.19-MariaDB-0+deb12u1",
        "driver": "asyncmy",
        "driver_version": "0.2.18",
        "transport": "tcp 127.0.0.1:3306",
        "isolation": "read-committed",
        "pool_size": 100,
        "prepared_statements": "server-side",
        "durable": True,
        "durability": {"innodb_flush_log_at_trx_commit": "1", "log_bin": "OFF"},
        "durability_note": "",
        "settings": {"innodb_buffer_pool_size": "134217728", "innodb_log_file_size": "100663296"},
    },
}


def fake_result(
    engine: str = "sqlite", latencies: tuple[float, ...] = (2, 4, 80), **changes: Any
) -> dict[str, Any]:
    """A result whose levels (500, 1,000, 1,500 req/s) have these p50-ish latencies in ms."""
    levels = [level_row(snapshot(i, 500.0 * (i + 1), ms), MARK) for i, ms in enumerate(latencies)]
    result: dict[str, Any] = {
        "schema": RESULT_SCHEMA,
        "kind": "ladder",
        "dbladder_version": "0.1.0",
        "status": "complete",
        "started_at": "2026-01-02T03:04:05+00:00",
        "finished_at": "2026-01-02T03:05:05+00:00",
        "config": {
            "db_url": ENGINES[engine]["url"],
            "preset": "quick",
            "ladder": {"start": 500.0, "step": 500.0, "steps": 3, "hold": 4.0, "warmup": 1.0},
            "workload": "shop",
            "write_share": 0.2,
            "pass_mark": {"p95_ms": 50.0, "max_fail_pct": 1.0},
            "seed": 1,
            "scale": 1.0,
            "sizes": {"products": 1000, "orders": 5000},
            "target": "http",
            "workers": 2,
            "pool_size": 100,
            "sqlite_writers": 0,
            "generator_processes": 1,
            "in_flight": 1000,
            "timeout": 5.0,
            "precise_clock": False,
            "continue_after_fail": False,
            "out_dir": "results/x",
        },
        "pass_mark": {"p95_ms": 50.0, "max_fail_pct": 1.0},
        "workload": {
            "name": "shop",
            "source": "built-in",
            "operations": ["product", "page", "order", "create"],
            "writes": ["create"],
            "mix": {"product": 0.4, "page": 0.24, "order": 0.16, "create": 0.2},
            "data": {"seed": 1, "sizes": {"products": 1000, "orders": 5000}},
        },
        "engine": copy.deepcopy(ENGINES[engine]),
        "service": {"workers": 2, "pool_size": 100, "sqlite_writers": 0, "url": "http://127.0.0.1:1"},
        "seeding": {
            "tables": {
                "products": {"rows": 1000, "seconds": 0.01},
                "orders": {"rows": 5000, "seconds": 0.02},
            },
            "finish_seconds": 0.01,
            "total_seconds": 0.04,
        },
        "ceiling_rps": ceiling_of(levels),
        "stopped_because": "the ladder finished",
        "levels": levels,
        "flags": [],
        "environment": {"python": "3.11.7", "platform": "Linux"},
    }
    result.update(changes)
    assert problem(result, RESULT_SCHEMA) is None, problem(result, RESULT_SCHEMA)
    return result


def with_ceiling(result: dict[str, Any], failing_from: int) -> dict[str, Any]:
    """The same result with every level from `failing_from` (0-based) failing its pass mark."""
    for level in result["levels"]:
        failed = level["index"] >= failing_from
        level["passed"] = not failed
        level["reasons"] = ["p95 99.0 ms is not under 50 ms"] if failed else []
    result["ceiling_rps"] = ceiling_of(result["levels"])
    return result


def texts(result_list: list[dict[str, Any]]) -> tuple[str, str]:
    report = document.build(result_list)
    return markdown.render(report), html.render(report)


# -- verdicts --------------------------------------------------------------------------------------


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


def test_the_failed_level_reason_is_in_the_verdict():
    result = fake_result("sqlite", (2, 4, 80))
    assert result["ceiling_rps"] == 1000.0
    md, _ = texts([result])
    assert md.startswith("# SQLite 3.54.1: held 1,000 req/s\n")
    assert "SQLite 3.54.1 held 1,000 req/s; the next level, 1,500 req/s, failed (p95 " in md


def test_rounds_with_different_pass_marks_are_not_compared():
    strict = fake_result("postgresql", (1, 1, 1), pass_mark={"p95_ms": 5.0, "max_fail_pct": 1.0})
    rounds = rounds_of([fake_result("sqlite", (1, 1, 1)), strict])
    assert len(rounds) == 2
    assert rounds[0].title != rounds[1].title
    assert "pass mark p95 < 5 ms" in rounds[1].title


# -- caveats ----------------------------------------------------------------------------------------


def caveat_leads(result_list: list[dict[str, Any]]) -> dict[str, str]:
    return {c.lead: c.text for c in caveats(rounds_of(result_list))}


def test_steal_is_a_caveat_when_high_and_says_not_measured_when_absent():
    result = fake_result()
    assert "CPU steal not measured." in caveat_leads([result])
    for level, steal in zip(result["levels"], (0.5, 7.25, 1.0), strict=True):
        level["machine"] = {
            "host": {"usr": 40.0, "sys": 20.0, "iowait": 0.0, "idle": 40.0 - steal, "steal": steal}
        }
    leads = caveat_leads([result])
    assert "CPU steal not measured." not in leads
    assert leads["CPU steal."].startswith("Steal reached 7.2 % of the CPU at level 2 of SQLite 3.54.1")
    for level in result["levels"]:
        level["machine"]["host"]["steal"] = 0.0
    assert "CPU steal." not in caveat_leads([result])


def test_weaker_durability_and_generator_flags_are_caveats():
    result = fake_result()
    result["engine"]["durable"] = False
    result["engine"]["durability_note"] = "synchronous=NORMAL"
    result["levels"][1]["flags"] = ["generator fell behind: schedule lag p99 5.8 ms is above 2 ms"]
    result["levels"][2]["flags"] = ["generator fell behind: schedule lag p99 3.1 ms is above 2 ms"]
    leads = caveat_leads([result])
    assert "synchronous=NORMAL" in leads["Durability not equal."]
    assert leads["Generator flagged."].startswith(
        "At levels 2, 3 of SQLite 3.54.1 the load generator fell behind"
    )
    md, _ = texts([result])
    assert "| durable | NO: synchronous=NORMAL |" in md


def test_a_known_database_size_and_memory_say_whether_it_fits():
    result = fake_result(environment={"python": "3.11", "platform": "Linux", "memory_total_bytes": 8 * 2**30})
    result["seeding"]["database_bytes"] = 3 * 2**30
    assert (
        "(3,072 MiB) fits in the machine's memory (8.0 GiB)" in caveat_leads([result])["Dataset in memory."]
    )
    result["seeding"]["database_bytes"] = 9 * 2**30
    assert "does not fit" in caveat_leads([result])["Dataset larger than memory."]


# -- machine figures --------------------------------------------------------------------------------

NESTED = {
    "host": {"usr": 41.5, "sys": 20.25, "iowait": 1.0, "idle": 37.25, "steal": 0.0},
    "groups": {
        "service": {"cpu_pct": 88.0, "cpu_ms_per_1k": 410.5},
        "database": {"cpu_pct": 55.0, "cpu_ms_per_1k": 250.25},
        "generator": {"cpu_pct": 30.0},
    },
    "load1": 1.5,
}
FLAT = {  # as dbladder.observe.summary.summarise writes it
    "seconds": 3.0,
    "coverage": 1.0,
    "samples": 3,
    "requests": 300,
    "groups": ["generator", "service", "database"],
    "host_usr": 41.5,
    "host_sys": 20.25,
    "host_iowait": 1.0,
    "host_idle": 37.25,
    "host_steal": 0.0,
    "host_busy": 61.75,
    "load1": 1.5,
    "service_cpu_pct": 88.0,
    "database_cpu_pct": 55.0,
    "generator_cpu_pct": 30.0,
    "generator_cpu_ms_per_1k": None,
    "service_cpu_ms_per_1k": 410.5,
    "database_cpu_ms_per_1k": 250.25,
    "service_vcsw_per_request": 2.5,
}


def levels_table(md: str) -> list[dict[str, str]]:
    lines = md.split("## Levels", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| level |"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True)))
    return rows


@pytest.mark.parametrize("machine", [NESTED, FLAT], ids=["nested", "flat"])
def test_machine_figures_become_columns_and_cpu_lines(machine):
    result = fake_result()
    result["levels"][0]["machine"] = copy.deepcopy(machine)
    result["levels"][1]["service_breakdown"] = {
        "timed_requests": 300,
        "pool_wait_mean_ms": 0.5,
        "pool_wait_p95_ms": 2.0,
        "database_mean_ms": 1.25,
        "other_mean_ms": 0.75,
        "pool_wait_share": 0.2,
    }
    md, page = texts([result])
    rows = levels_table(md)
    assert rows[0]["host usr %"] == "42" and rows[0]["host steal %"] == "0" and rows[0]["host idle %"] == "37"
    assert rows[0]["service CPU %"] == "88" and rows[0]["db CPU %"] == "55"
    assert rows[0]["service CPU ms/1k"] == "410.5" and rows[0]["db CPU ms/1k"] == "250.2"
    assert rows[0]["gen CPU %"] == "30" and rows[0]["load"] == "1.5"
    assert rows[1]["host usr %"] == "-" and rows[1]["db CPU %"] == "-"
    assert rows[1]["gen CPU %"] == "25"  # no sample: the generator's own cpu_share
    assert rows[1]["pool wait ms"] == "0.50" and rows[1]["in db ms"] == "1.25" and rows[0]["other ms"] == "-"
    assert "not measured in this run" not in md
    cpu = page.split('data-plot="cpu"', 1)[1].split("</figure>", 1)[0]
    assert re.search(r'data-key="database_cpu_pct".*?data-x="500" data-y="55"', cpu)
    assert re.search(r'data-key="service_cpu_pct".*?data-x="500" data-y="88"', cpu)
    assert "not measured in this run" not in cpu


def test_a_group_the_sampler_could_not_see_reads_not_measured():
    result = fake_result()
    for level in result["levels"]:
        level["machine"] = {**FLAT, "database_cpu_pct": None, "database_cpu_ms_per_1k": None}
    md, page = texts([result])
    assert "db CPU %" not in md and "service CPU %" in md
    cpu = page.split('data-plot="cpu"', 1)[1].split("</figure>", 1)[0]
    assert cpu.count("not measured in this run") == 1  # the database panel


def test_without_machine_figures_the_cpu_plot_and_table_say_not_measured():
    md, page = texts([fake_result()])
    assert "service CPU %" not in md and "host usr %" not in md
    assert "- CPU of the host, the service and the database: not measured in this run." in md
    cpu = page.split('data-plot="cpu"', 1)[1].split("</figure>", 1)[0]
    assert cpu.count("not measured in this run") == 2  # the database and service panels
    assert 'data-key="generator_cpu_pct"' in cpu


# -- charts -----------------------------------------------------------------------------------------


def test_linear_ticks_are_round_and_cover_the_values():
    assert linear_ticks(0, 2000) == [0, 500, 1000, 1500, 2000]
    assert linear_ticks(0, 1.5) == [0, 0.5, 1.0, 1.5]
    assert linear_ticks(0, 2400) == [0, 500, 1000, 1500, 2000, 2500]
    assert linear_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_log_ticks_label_decades_and_add_2_and_5_on_short_axes():
    labelled, minor = log_ticks(0.4, 60)
    assert labelled == [0.1, 1, 10, 100]
    assert 0.2 in minor and 50 in minor
    labelled, _ = log_ticks(3, 40)
    assert labelled == [1, 2, 5, 10, 20, 50, 100]


def test_a_point_lands_where_its_value_says():
    chart = Chart("t", Axis.covering([0, 2000], "x"), Axis.covering([1, 100], "y", log=True), 640, 360)
    # Plot area: x from 66 to 622, y from 314 (bottom) to 34 (top); y spans the decades 1 to 100.
    assert chart.px(0) == pytest.approx(66) and chart.px(2000) == pytest.approx(622)
    assert chart.py(10) == pytest.approx((314 + 34) / 2)
    chart.series("s", [Point(1000, 10), Point(1500, 0), Point(2000, None)], "#000")
    svg = chart.svg()
    assert re.search(r'<circle cx="344.0" cy="174.0" r="4.0" [^>]*data-x="1000" data-y="10"', svg)
    assert svg.count('class="point"') == 1  # 0 has no place on a log axis, None is no figure


# -- settings and files -----------------------------------------------------------------------------


def test_settings_are_written_as_each_engines_config_file():
    caption, text = settings_file(ENGINES["mariadb"])
    assert caption.startswith("99-bench.cnf")
    assert text.splitlines() == [
        "[mariadbd]",
        "innodb_flush_log_at_trx_commit = 1",
        "skip-log-bin",
        "innodb_buffer_pool_size = 128M",
        "innodb_log_file_size = 96M",
        "transaction-isolation = READ-COMMITTED",
    ]
    caption, text = settings_file(ENGINES["postgresql"])
    assert caption.startswith("bench.conf")
    assert "shared_buffers = 128MB" in text and "default_transaction_isolation = 'read committed'" in text
    _, text = settings_file(ENGINES["sqlite"])
    assert "PRAGMA synchronous = FULL;" in text


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def test_samples_go_to_timeseries_csv_and_a_comparison_tags_them_by_run(tmp_path):
    samples = [{"t": 1.0, "interval": 1.0, "host_usr": 40.5}, {"t": 2.0, "interval": 1.0, "host_usr": 42.0}]
    write_bundle(fake_result("sqlite"), tmp_path / "a", samples)
    write_bundle(fake_result("postgresql"), tmp_path / "b")
    rows = read_csv(tmp_path / "a" / "timeseries.csv")
    assert rows == [
        {"t": "1.0", "interval": "1.0", "host_usr": "40.5"},
        {"t": "2.0", "interval": "1.0", "host_usr": "42.0"},
    ]
    assert (tmp_path / "b" / "timeseries.csv").read_text() == "t\n"
    assert "timeseries.csv (2 per-second samples)" in (tmp_path / "a" / "report.md").read_text()
    build_reports([tmp_path / "a", tmp_path / "b"], tmp_path / "c")
    tagged = read_csv(tmp_path / "c" / "timeseries.csv")
    assert [row["engine"] for row in tagged] == ["SQLite 3.54.1", "SQLite 3.54.1"]
    assert [row["run_index"] for row in tagged] == ["0", "0"]
    again = load_bundle(tmp_path / "c")
    assert again.kind == "compare" and [len(s) for s in again.samples] == [2, 0]
    assert again.samples[0][0] == {"t": "1.0", "interval": "1.0", "host_usr": "40.5"}


def test_markdown_cells_escape_pipes():
    result = fake_result()
    result["label"] = "SQLite | tuned"
    md, _ = texts([result])
    assert "SQLite \\| tuned" in md


# -- the loader's errors ----------------------------------------------------------------------------


def test_missing_corrupt_and_unknown_bundles_raise_their_own_errors(tmp_path):
    with pytest.raises(MissingBundle, match="no such folder"):
        load_bundle(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingBundle, match=r"holds neither result\.json nor compare\.json"):
        load_bundle(tmp_path / "empty")
    assert MissingBundle.exit_code == 2

    folder = tmp_path / "bundle"
    write_bundle(fake_result(), folder)
    text = (folder / "result.json").read_text()
    (folder / "result.json").write_text(text[: len(text) // 2])
    with pytest.raises(CorruptBundle, match="is not valid JSON"):
        load_bundle(folder)

    broken = fake_result()
    broken["levels"][1]["p95_ms"] = "fast"
    (folder / "result.json").write_text(json.dumps(broken))
    with pytest.raises(CorruptBundle, match=r"levels\[1\]\.p95_ms: 'fast' is not of type 'number'"):
        load_bundle(folder)

    (folder / "result.json").write_text(json.dumps({**fake_result(), "schema": "dbladder.result/99"}))
    with pytest.raises(UnknownBundleVersion, match=r"schema 'dbladder.result/99', which this dbladder"):
        load_bundle(folder)
    assert UnknownBundleVersion.exit_code == 1


dbladder = partial(run_dbladder, timeout=60)


@pytest.mark.slow
def test_the_report_command_errors_are_one_line_with_usage_exit_code(tmp_path):
    result = dbladder("report", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert result.stderr == f"Error: no bundle at {tmp_path / 'nowhere'}: no such folder\n"
    write_bundle(fake_result(), tmp_path / "a")
    write_bundle(fake_result("postgresql"), tmp_path / "b")
    result = dbladder("report", str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.returncode == 2
    assert result.stderr == "Error: several bundles make one comparison report: give --out DIR for it\n"
    result = dbladder("report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "a"))
    assert result.returncode == 2
    assert "holds a single run's result.json" in result.stderr
    (tmp_path / "a" / "result.json").write_text("{}")
    result = dbladder("report", str(tmp_path / "a"))
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "schema None" in result.stderr


def test_a_bundle_renders_the_same_report_every_time(tmp_path):
    write_bundle(fake_result(), tmp_path / "a")
    first = (tmp_path / "a" / "report.md").read_text(), (tmp_path / "a" / "report.html").read_text()
    build_reports([tmp_path / "a"], tmp_path / "a")
    assert ((tmp_path / "a" / "report.md").read_text(), (tmp_path / "a" / "report.html").read_text()) == first
    written = build_reports([tmp_path / "a" / "result.json"], tmp_path / "copy")
    assert [path.name for path in written] == [
        "result.json",
        "timeseries.csv",
        "levels.csv",
        "report.md",
        "report.html",
    ]
    assert (tmp_path / "copy" / "report.md").read_text() == first[0]


def test_the_page_keeps_its_inline_marks_and_escapes_everything_else():
    result = fake_result()
    result["label"] = "<script>alert(1)</script>"
    _, page = texts([result])
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<strong>One run.</strong>" in page


def test_the_fake_results_use_only_documented_fields():
    documented = set(
        re.findall(
            r"^\| `([^`]+)` \|",
            (Path(__file__).parents[2] / "docs" / "result-schema.md").read_text(),
            re.M,
        )
    )
    result = fake_result()
    assert {key for key in result} <= documented
    assert {f"levels[].{key}" for key in result["levels"][0]} <= documented


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


# -- the closed model (seed 001's users and spike) ----------------------------------------------------

THINK = {"think_min": 0.05, "think_max": 0.15}


def users_result(
    engine: str = "sqlite",
    achieved: tuple[float, ...] = (195.0, 390.0, 700.0),
    users: tuple[int, ...] = (20, 40, 80),
    failing_from: int | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """A closed-model result (users with think time) shaped as the runner writes it: level rows with
    users, `offered_rps` = users / mean think time, and the closed model's headline figures."""
    levels = []
    for index, (count, achieved_rps) in enumerate(zip(users, achieved, strict=True)):
        level = snapshot(index, count / 0.1, 1.0)
        level["users"], level["ramp"] = count, 1.0
        row = level_row(level, MARK)
        row["achieved_rps"] = achieved_rps
        if failing_from is not None and index >= failing_from:
            row["passed"], row["reasons"] = False, ["p95 99.0 ms is not under 50 ms"]
        levels.append(row)
    held = None
    for row in levels:  # as the runner's _figures: the last level of the unbroken passes
        if not row["passed"]:
            break
        held = row
    result = fake_result(engine, (1, 1, 1))
    result["config"].update(
        preset="users-read",
        write_share=0.05,
        ladder=None,
        users={"phases": [{"users": count, "ramp": 1.0, "hold": 3.0} for count in users], **THINK},
    )
    result["workload"]["mix"] = {"product": 0.475, "page": 0.285, "order": 0.19, "create": 0.05}
    result.update(
        model="closed",
        levels=levels,
        ceiling_users=held["users"] if held else None,
        ceiling_rps=held["achieved_rps"] if held else None,
        peak_rps=max(row["achieved_rps"] for row in levels),
        stopped_because="every phase ran",
    )
    result.update(changes)
    assert problem(result, RESULT_SCHEMA) is None, problem(result, RESULT_SCHEMA)
    return result


def spike_result(engine: str = "sqlite", recovery: float | None = 2.0, **changes: Any) -> dict[str, Any]:
    """Seed 001's spike, small: 20 -> 200 -> 20 users."""
    result = users_result(engine, (195.0, 1500.0, 198.0), (20, 200, 20), spike=None)
    result["config"].update(preset="spike", write_share=0.2)
    result["workload"]["mix"] = {"product": 0.4, "page": 0.24, "order": 0.16, "create": 0.2}
    result["spike"] = {"recovery_seconds": recovery, "tolerance": 0.2}
    result.update(changes)
    return result


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


def test_the_terminal_summary_of_a_spike_shows_its_phases():
    text = terminal.summary(spike_result())
    assert "phases   195 / 1,500 / 198 req/s" in text
    assert "recovery p95 back within 20 % after 2 s" in text
    assert "ceiling" not in text


# -- the one-run rule and the comparison table ------------------------------------------------------


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


def test_a_compare_json_as_dbladder_compare_writes_it_validates_and_renders(tmp_path):
    runs = []
    for number in (1, 2, 3):
        for label, engine, held in (("sqlite", "sqlite", 2), ("postgresql", "postgresql", 1)):
            result = with_ceiling(fake_result(engine, (1, 1, 1)), held)
            result["config"]["seed"] = None  # the comparison restored the data, the run loaded nothing
            result.update(
                label=label, run=number, fresh={"run": number, "method": "restore", "seconds": 0.25}
            )
            runs.append(result)
    document = {
        "schema": "dbladder.compare/2",
        "kind": "compare",
        "dbladder_version": "0.1.0",
        "created_at": "2026-01-02T03:04:05+00:00",
        "status": "complete",
        "databases": [
            {"label": "sqlite", "db_url": "sqlite:///a.db"},
            {"label": "postgresql", "db_url": "x"},
        ],
        "runs_per_database": 3,
        "preparation": {"sqlite": {"method": "restore"}, "postgresql": {"method": "restore"}},
        "runs": runs,
        "finished_at": "2026-01-02T03:14:05+00:00",
    }
    assert problem(document, "dbladder.compare/2") is None
    folder = tmp_path / "compare"
    folder.mkdir()
    text = json.dumps(document, indent=2) + "\n"
    (folder / "compare.json").write_text(text)
    written = build_reports([folder], folder)
    assert [path.name for path in written] == ["timeseries.csv", "levels.csv", "report.md", "report.html"]
    assert (folder / "compare.json").read_text() == text  # the writer's fields are kept
    md = (folder / "report.md").read_text()
    assert md.startswith("# sqlite vs postgresql\n")
    assert "| quick: 20 % writes, 500 to 1,500 req/s | 3 | 1,000 / 1,000 / 1,000 req/s (median 1,000) |" in md
    assert "| sqlite +100 % |" in md
    assert "### sqlite, run 3: quick" in md
    assert "the data as seeded, given back by restore before the run in 0.2 s" in md
    assert "**Data restored.** sqlite and postgresql started every run from the data as seeded" in md
    leads = caveat_leads(runs)
    assert "Data restored." in leads and "Data not fresh." not in leads
    assert comparison_table(runs)[0] == ["test", "runs", "sqlite", "postgresql", "difference"]


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


def test_a_search_reports_its_bracket_and_plots_every_probe_in_order():
    result = fake_result("sqlite", (1, 1, 1))
    # Probes ran 500, 1,500 (failed), 1,000: the ceiling is 1,000, the lowest failure 1,500.
    levels = result["levels"]
    levels[1], levels[2] = levels[2], levels[1]
    levels[1]["passed"], levels[1]["reasons"] = False, ["p95 99.0 ms is not under 50 ms"]
    for number, level in enumerate(levels):
        level["index"] = number
    result["config"]["search"] = {"start": 500, "factor": 2, "resolution": 0.05, "hold": 1.5, "warmup": 0.5}
    result["search"] = {"held_rps": 1000, "failed_rps": 1500, "probes": 3, "stopped_because": "budget"}
    result["ceiling_rps"] = 1000
    md, page = texts([result])
    assert (
        "SQLite 3.54.1 held 1,000 req/s; 1,500 req/s failed (p95 99.0 ms is not under 50 ms), "
        "found in 3 probes." in md
    )
    assert "**Precision is the search's last bracket.**" in md and "held 1,000 req/s and failed 1,500" in md
    probes = re.search(r'data-plot="probes".*?</figure>', page, re.S)
    assert probes is not None
    # The probes plot has the rates in the order run; the rate plots join them in order of rate.
    assert re.findall(r'data-key="offered_rps".*?</g>', probes.group(0), re.S)
    xs = [float(x) for x in re.findall(r'data-x="([\d.]+)"', probes.group(0))]
    ys = [float(y) for y in re.findall(r'data-y="([\d.]+)" data-failed', probes.group(0))]
    assert xs[:3] == [1.0, 2.0, 3.0] and ys[:3] == [500.0, 1500.0, 1000.0]
