"""The bench results as text tables for the terminal; they read result dicts and nothing else."""

from __future__ import annotations

from typing import Any

from ..engine_registry import engine_kind

ROUND_TITLES = {
    "point_reads": "point reads",
    "write_transactions": "write transactions",
    "batched_inserts": "batched inserts",
}


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(header), *(line(row) for row in rows)]


def _us(value: float) -> str:
    return f"{value / 1000:,.2f} ms" if value >= 1000 else f"{value:,.0f} us"


def render_rounds(result: dict[str, Any]) -> str:
    """The raw rounds: ours, the bare reference, the ratio, and the post's M1 figure."""
    engine = result["engine"]
    data = result["data"]
    lines = [
        f"Raw rounds on {engine['engine']} {engine['server_version']} ({engine['driver']} "
        f"{engine['driver_version']}, {engine['transport']}): {result['seconds']:g} s each, "
        f"{result['connections']} connection(s), {data['users']:,} users, {data['posts']:,} posts",
    ]
    header = [
        "round",
        "dbladder",
        "p50",
        "p99",
        "max",
        "bare reference",
        "p50",
        "p99",
        "ours/ref",
        "post (M1)",
    ]
    rows = []
    for name, entry in result["rounds"].items():
        ours, reference = entry["ours"], entry["reference"]
        unit = entry["unit"]
        rows.append(
            [
                ROUND_TITLES.get(name, name),
                f"{entry['rate']:,.0f} {unit}",
                _us(ours["p50_us"]),
                _us(ours["p99_us"]),
                _us(ours["max_us"]),
                f"{reference['rate']:,.0f} {unit}" if reference else "-",
                _us(reference["p50_us"]) if reference else "-",
                _us(reference["p99_us"]) if reference else "-",
                f"{entry['ratio']:.2f}" if entry["ratio"] is not None else "-",
                f"{entry['post_m1']:,} {unit}",
            ]
        )
    lines += _table(header, rows, right={1, 2, 3, 4, 5, 6, 7, 8, 9})
    references = {entry["reference"]["name"] for entry in result["rounds"].values() if entry["reference"]}
    for name in sorted(references):
        lines.append(f"bare reference: {name}")
    if "batched_inserts" in result["rounds"]:
        lines.append(f"batched inserts: {result['batch_rows']} rows per transaction")
    lines.append(
        "The post's figures are DB Pro's on an Apple M1 (better-sqlite3, SQLite 3.49.2): compare ratios, "
        "not absolutes."
    )
    return "\n".join(lines)


def render_journal(result: dict[str, Any]) -> str:
    """The readers-and-writer table: one row per engine, mode and phase, the post's figure beside."""
    config = result["config"]
    lines = [
        f"{config['readers']} readers on timelines + 1 writer, {config['seconds']:g} s per phase, "
        f"readers and writer as {config['workers']}",
    ]
    header = [
        "engine",
        "mode",
        "phase",
        "reads/s",
        "read p50",
        "p99",
        "max",
        "writes/s",
        "busy errors",
        "busy retries r/w",
        "post reads/s",
        "post p99",
    ]
    rows = []
    for row in result["rows"]:
        post = row["post"]
        retries = row["busy_retries"]
        # Busy errors and retries are waits on SQLite's file lock: an in-process engine's only.
        file_locked = engine_kind(row["engine"]).in_process
        rows.append(
            [
                row["engine"],
                row["mode"],
                row["phase"],
                f"{row['reads_per_s']:,.0f}",
                f"{row['read_p50_ms']:.2f} ms",
                f"{row['read_p99_ms']:.2f} ms",
                f"{row['read_max_ms']:.0f} ms",
                f"{row['writes_per_s']:,.0f}" if row["phase"] != "readers only" else "-",
                str(row["busy_errors"]) if file_locked else "-",
                f"{retries['readers']}/{retries['writer']}" if file_locked else "-",
                f"{post['reads_per_s']:,}" if "reads_per_s" in post else "",
                f"{post['read_p99_ms']:.2f} ms" if "read_p99_ms" in post else "",
            ]
        )
    lines += _table(header, rows, right={3, 4, 5, 6, 7, 8, 9, 10, 11})
    other = {name: count for row in result["rows"] for name, count in row["errors"].items()}
    if other:
        lines.append("errors: " + ", ".join(f"{name} {count}" for name, count in sorted(other.items())))
    lines.append(
        "busy errors (SQLite): SQLITE_BUSY / SQLITE_LOCKED that outlived busy_timeout; busy retries: sleeps "
        "of the busy handler (readers/writer). Servers wait on row locks instead; failures show as errors."
    )
    return "\n".join(lines)
