"""A dataset bigger than the database's memory, measured by a round: a managed server under
`--memory database=...` with data several times the cap reads from disk during a read level and
the result says so, in its figures and in the report's sentence; the same data without the cap is
served from memory (what it read from disk next to nothing against what it read).

PostgreSQL reads through the kernel's page cache, which the cap bounds; InnoDB reads with O_DIRECT
(MariaDB's default since 10.6), past the page cache, so for MariaDB what is in memory is its buffer
pool alone: the cap bounds the pool a server can be given, and the test gives it one that fits."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from managed_support import require_programs

from dbladder.plans import Ladder
from dbladder.result.schema import RESULT_SCHEMA, problem
from dbladder.roles import Placement, RoleLimits, memory_problem
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

CAP = 128 << 20  # the floor of --memory: the smallest cap a server starts under
# One read level, long enough that the order lookups (a fifth of the reads, at random over every
# order) fetch several MiB from disk under the cap, and a warm-up to open the connections.
PLAN = Ladder(300, 0, 1, 5.0, warmup=1.0)
# What a block read costs the disk at most when it misses: PostgreSQL's page, InnoDB's page.
PAGE_BYTES = {"postgresql": 8192, "mariadb": 16384}


def read_round(tmp_path: Path, name: str, db_url: str, orders: int, cap: int | None) -> dict[str, Any]:
    config = RunConfig(
        db_url=db_url,
        plan=PLAN,
        write_share=0.0,
        sizes={"orders": orders},
        target="direct",
        pool_size=4,
        out_dir=tmp_path / name,
        placement=Placement(database=RoleLimits(memory=cap)),
        integrity=False,
    )
    result = run_round(config).to_json()
    assert result["status"] == "complete", result["stopped_because"]
    assert problem(result, RESULT_SCHEMA) is None
    return result


def from_disk_share(reads: dict[str, Any], engine: str) -> float:
    """The share of the level's pages that the disk served, at most, worked out here: the bytes its
    server's processes read from storage over the bytes of every page it read (hits and misses)."""
    pages = reads["cache_hits"] + reads["cache_misses"]
    assert pages > 0, reads
    return min(1.0, float(reads["disk_bytes"]) / (PAGE_BYTES[engine] * pages))


def check_capped_and_free(capped: dict[str, Any], free: dict[str, Any], engine: str) -> None:
    (capped_level,) = capped["levels"]
    (free_level,) = free["levels"]
    disk, free_disk = capped_level["storage"]["disk_bytes"], free_level["storage"]["disk_bytes"]
    assert disk is not None and free_disk is not None
    # Capped, the data could not stay in memory: the level read several MiB from disk (measured on
    # PostgreSQL: 10-30 MiB in 5 s at 300 req/s). Uncapped, memory held all of it: next to nothing
    # came from disk (measured: 0 to 0.5 MiB), and under 1 % of the blocks it read.
    assert disk > 4 << 20, capped_level["storage"]
    assert free_disk < max(1 << 20, 0.05 * disk), (free_level["storage"], capped_level["storage"])
    assert from_disk_share(free_level["storage"], engine) < 0.01, free_level["storage"]
    # The result's own share is the same figure: capped, more than 1 % of the pages read came from
    # disk (measured: 11 % of PostgreSQL's 8 kB blocks, 2.3 % of InnoDB's 16 kB pages, most of whose
    # reads were of the products its pool kept); uncapped none (0 bytes, above).
    for reads in (capped_level["storage"], free_level["storage"]):
        assert abs(reads["disk_share"] - from_disk_share(reads, engine)) < 1e-9, reads
    assert capped_level["storage"]["disk_share"] > 0.01, capped_level["storage"]


def check_report(out: Path, title: str, against: str) -> None:
    report = (out / "report.md").read_text()
    assert "most likely served from memory" not in report
    assert title in report, report
    assert re.search(against, report), report


@pytest.mark.slow
def test_postgresql_under_a_cap_reads_from_disk_and_without_it_from_memory(tmp_path) -> None:
    if (why := memory_problem()) is not None:
        pytest.skip(why)
    require_programs("postgresql")
    # Shared buffers well under the cap, so that the server, its buffers and the page cache of
    # its files share the cap as on a small host (128 MB of buffers would fill it alone).
    db_url = "managed:postgresql?shared_buffers=16MB"
    orders = 1_500_000  # about 400 MB on disk (some 265 bytes an order with its items): 3 x the cap
    capped = read_round(tmp_path, "capped", db_url, orders, CAP)
    assert capped["storage"]["memory_cap_bytes"] == CAP
    assert capped["storage"]["size_bytes"] > 2.5 * CAP, capped["storage"]
    free = read_round(tmp_path, "free", db_url, orders, None)
    assert free["storage"]["memory_cap_bytes"] is None
    check_capped_and_free(capped, free, "postgresql")
    check_report(
        tmp_path / "capped", "Dataset read from disk.", r"MiB on disk, is [\d.]+ x its memory cap \(128 MiB\)"
    )
    check_report(
        tmp_path / "capped",
        "Dataset read from disk.",
        r"MiB came from disk \(at most \d+ % of the pages it read\)",
    )
    check_report(
        tmp_path / "free",
        "Dataset in memory (measured).",
        r"MiB on disk, is ([\d.]+ x|under 1 % of) the machine's memory",
    )


@pytest.mark.slow
def test_mariadb_under_a_cap_reads_from_disk_and_with_a_pool_that_holds_the_data_from_memory(
    tmp_path,
) -> None:
    if (why := memory_problem()) is not None:
        pytest.skip(why)
    require_programs("mariadb")
    # O_DIRECT: the page cache serves InnoDB nothing, its buffer pool is its memory. Under the cap
    # the pool is small; uncapped the same data is read with a pool that holds all of it. mariadbd
    # needs some 100 MB besides its pool (measured: 130 MB resident with a 32 MB pool while it
    # loads), so under 128M it is killed for memory while it loads: 256M here, as the issue asks.
    orders = 600_000  # about 100 MB on disk (some 160 bytes an order with its items): 3 x the pool
    capped = read_round(tmp_path, "capped", "managed:mariadb?innodb_buffer_pool_size=32M", orders, 2 * CAP)
    assert capped["storage"]["memory_cap_bytes"] == 2 * CAP
    assert capped["storage"]["size_bytes"] > 2.5 * (32 << 20), capped["storage"]
    free = read_round(tmp_path, "free", "managed:mariadb?innodb_buffer_pool_size=512M", orders, None)
    check_capped_and_free(capped, free, "mariadb")
    # The pool holds the data: its hit ratio near 100 %.
    (free_level,) = free["levels"]
    assert free_level["storage"]["miss_share"] < 0.01, free_level["storage"]
    check_report(
        tmp_path / "capped", "Dataset read from disk.", r"MiB on disk, is [\d.]+ x its memory cap \(256 MiB\)"
    )
    check_report(
        tmp_path / "free",
        "Dataset in memory (measured).",
        r"MiB on disk, is ([\d.]+ x|under 1 % of) the machine's memory",
    )
