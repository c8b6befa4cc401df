"""Made-up results for the report tests, built the way the runner builds them.

Level rows come from `level_row` over generator-shaped snapshots, and every result is checked
against the shipped schema first, so a made-up result cannot drift from a real one unnoticed.
"""

from __future__ import annotations

import copy
import csv
from pathlib import Path
from typing import Any

from dbladder.histogram import Histogram
from dbladder.outcomes import OUTCOMES
from dbladder.report import document, html, markdown
from dbladder.report.caveats import caveats
from dbladder.report.runs import rounds_of
from dbladder.result.level_rows import ceiling_of, level_row
from dbladder.result.passmark import PassMark
from dbladder.result.run import RunResult
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
    assert RunResult.from_json(result).to_json() == result  # the typed result reads it unchanged
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


def caveat_leads(result_list: list[dict[str, Any]]) -> dict[str, str]:
    return {c.lead: c.text for c in caveats(rounds_of(result_list))}


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
    assert RunResult.from_json(result).to_json() == result  # the typed result reads it unchanged
    return result


def spike_result(engine: str = "sqlite", recovery: float | None = 2.0, **changes: Any) -> dict[str, Any]:
    """Seed 001's spike, small: 20 -> 200 -> 20 users."""
    result = users_result(engine, (195.0, 1500.0, 198.0), (20, 200, 20), spike=None)
    result["config"].update(preset="spike", write_share=0.2)
    result["workload"]["mix"] = {"product": 0.4, "page": 0.24, "order": 0.16, "create": 0.2}
    result["spike"] = {"recovery_seconds": recovery, "tolerance": 0.2}
    result.update(changes)
    return result


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))
