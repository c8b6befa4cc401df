"""The shop's read round of "Postgres vs MariaDB on two dedicated CPUs" at a size bigger than the
database's memory, capped and uncapped, one after the other: ceilings and the share of reads from
disk per engine.

    python benchmarks/bigdata_round.py                 # a tenth of the round: 2 M orders, 400M cap
    python benchmarks/bigdata_round.py --full          # the round's size: 20 M orders, 4G cap
    python benchmarks/bigdata_round.py --users 100,400,1600 --hold 20

The post ran 20 M orders on a database host of 2 vCPUs and 4 GB. `--full` keeps that: a 4G cap
with the post's buffers (PostgreSQL 1GB of shared buffers, MariaDB a 2,560M pool); the default is
a tenth of everything, 2 M orders under 400M with buffers a tenth as large, which keeps the ratio
of data to memory (docs/experiments.md). Both conditions run `dbladder compare` with the managed
servers on CPU 1 and the generator on CPU 0; capped, the database role runs under `--memory`.
InnoDB reads past the page cache (O_DIRECT), so what MariaDB holds in memory is its pool alone:
uncapped it gets a pool that holds the data, as an uncapped host would have given it.

Needs root (or a delegated cgroup) for the cap. The figures printed are this machine's: a shared
2-core machine caps the generator and the service well before either database (the report's
"why" lines say which role stopped a level), so compare the disk shares and the engines' order,
not the rates, with the post's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SCALED = {
    "orders": 2_000_000,
    "cap": "400M",
    "capped": {
        "postgresql": "managed:postgresql?shared_buffers=100MB",
        # 256M measured killed for memory under 400M with the service's 100 connections: 192M fits.
        "mariadb": "managed:mariadb?innodb_buffer_pool_size=192M",
    },
    "free": {
        "postgresql": "managed:postgresql?shared_buffers=100MB",
        "mariadb": "managed:mariadb?innodb_buffer_pool_size=1G",
    },
}
FULL = {
    "orders": 20_000_000,
    "cap": "4G",
    "capped": {
        "postgresql": "managed:postgresql?shared_buffers=1GB&effective_cache_size=3GB&max_wal_size=2GB",
        "mariadb": "managed:mariadb?innodb_buffer_pool_size=2560M&innodb_log_file_size=2G",
    },
    "free": {
        "postgresql": "managed:postgresql?shared_buffers=1GB&effective_cache_size=3GB&max_wal_size=2GB",
        "mariadb": "managed:mariadb?innodb_buffer_pool_size=6G&innodb_log_file_size=2G",
    },
}


def compare(out: Path, round_: dict[str, Any], condition: str, args: argparse.Namespace) -> dict[str, Any]:
    """One `dbladder compare` of both engines under `condition` ("capped" or "free"): compare.json."""
    command = [sys.executable, "-m", "dbladder", "compare", "--preset", "users-read"]
    command += ["--size", f"orders={round_['orders']}", "--runs", "1", "--out", str(out)]
    command += ["--users", args.users, "--hold", str(args.hold), "--ramp", str(args.ramp)]
    command += ["--cpus", "generator=0", "--cpus", "database=1", "--continue-after-fail"]
    for url in round_[condition].values():
        command += ["--db", url]
    if condition == "capped":
        command += ["--memory", f"database={round_['cap']}"]
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    if done.returncode not in (0, 3):
        print(f"compare exited {done.returncode}; its results so far are in {out}", flush=True)
    path = out / "compare.json"
    return json.loads(path.read_text()) if path.exists() else {"runs": []}


def rows(document: dict[str, Any], condition: str) -> list[str]:
    lines = []
    for run in document["runs"]:
        engine = run["engine"]["engine"] if run.get("engine") else "?"
        storage = run.get("storage") or {}
        size, cap = storage.get("size_bytes"), storage.get("memory_cap_bytes")
        ratio = f"{size / cap:.2f} x" if size and cap else "-"
        shares = [
            f"{level.get('users')}: {100 * level['storage']['disk_share']:.1f} %"
            if (level.get("storage") or {}).get("disk_share") is not None
            else f"{level.get('users')}: -"
            for level in run["levels"]
        ]
        achieved = ", ".join(f"{level['achieved_rps']:,.0f}" for level in run["levels"])
        lines.append(
            f"{condition:<7} {engine:<11} {(size or 0) / 2**20:8,.0f} MiB {ratio:>8}  "
            f"ceiling {run.get('ceiling_rps') or 0:8,.0f} req/s at {run.get('ceiling_users')} users; "
            f"achieved {achieved}; from disk {'; '.join(shares)}; status {run.get('status')}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="20 M orders under a 4G cap (the post's size)")
    parser.add_argument("--users", default="100,400,1600", help="users per level (the post: 100 to 3,200)")
    parser.add_argument("--hold", type=float, default=20.0, help="seconds per level (the post: 80)")
    parser.add_argument("--ramp", type=float, default=5.0, help="arrival ramp, s (the post: 10)")
    parser.add_argument("--out", type=Path, default=None, help="folder for both comparisons' bundles")
    args = parser.parse_args()
    round_ = FULL if args.full else SCALED
    out = args.out or Path(tempfile.mkdtemp(prefix="dbladder-bigdata-"))
    documents = {
        condition: compare(out / condition, round_, condition, args) for condition in ("capped", "free")
    }
    print(f"\n{round_['orders']:,} orders; capped: --memory database={round_['cap']}; bundles in {out}")
    print("condition engine      on disk   / cap   ceiling; achieved per level; share of pages from disk")
    for condition, document in documents.items():
        for line in rows(document, condition):
            print(line)


if __name__ == "__main__":
    main()
