"""An engine's settings as lines (dbladder.engines.describe)."""

from __future__ import annotations

from dbladder.engines.base import EngineInfo
from dbladder.engines.describe import render


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
