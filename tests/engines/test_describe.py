"""An engine's settings as lines (dbladder.engines.describe)."""

from __future__ import annotations

import asyncio

from dbladder.engines.base import EngineInfo, EngineOptions
from dbladder.engines.describe import describe, render


def test_the_settings_are_aligned_lines_with_the_durability_spelled_out() -> None:
    info = EngineInfo(
        engine="sqlite",
        url="sqlite:///shop.db",
        server_version="3.54.0",
        driver="apsw",
        driver_version="3.54.0.0",
        transport="in-process",
        isolation="serializable",
        pool_size=8,
        prepared_statements="statement cache",
        durable=False,
        durability={"synchronous": "OFF"},
        durability_note="synchronous=OFF",
        settings={"journal_mode": "wal"},
    )
    assert render(info).splitlines() == [
        "engine         sqlite 3.54.0",
        "driver         apsw 3.54.0.0",
        "url            sqlite:///shop.db",
        "transport      in-process",
        "durable        NO (synchronous=OFF)",
        "  synchronous  OFF",
        "isolation      serializable",
        "pool size      8",
        "prepared       statement cache",
        "journal_mode   wal",
    ]


def test_describe_reads_the_settings_back_from_a_real_database(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/x.db"
    info = asyncio.run(describe(url, EngineOptions(pool_size=1)))
    assert info.engine == "sqlite" and info.pool_size == 1 and "synchronous" in info.durability
    assert render(info).splitlines()[0].startswith("engine ")
