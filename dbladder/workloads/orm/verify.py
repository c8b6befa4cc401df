"""After a run: the data set's sizes read back, and every acknowledged write found in the database.

These read through dbladder's engine (plain SQL), not the ORM, so a check does not trust the
code it checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...engines.base import Engine
from ...errors import NotSeeded
from .data import POPULATED, Sizes


async def sizes_in(engine: Engine) -> dict[str, int]:
    """The sizes of the data set in a seeded database (rows per table; written rows count too).

    Raises NotSeeded when a table is missing or the administrator is not there.
    """
    for table in (*POPULATED, "asset_permissions"):
        if not await engine.table_exists(table):
            raise NotSeeded(
                f"{engine.url.redacted} has no {table} table of the orm workload; "
                "seed it first (dbladder seed --workload orm) or run without --no-seed"
            )
    sizes = {}
    async with engine.read() as session:
        for table in POPULATED:
            row = await session.fetch_one(f"SELECT count(*) FROM {table}")
            sizes[table] = int(row[0]) if row else 0
    if sizes["users"] < 1:
        raise NotSeeded(f"{engine.url.redacted} has no users of the orm workload; seed it first")
    return sizes


EXAMPLES = 10
"""How many lost or corrupted writes a result describes one by one."""


async def verify(
    engine: Engine, sizes: Sizes, acknowledged: Mapping[str, Sequence[tuple[Any, ...]]]
) -> dict[str, Any]:
    """Is every acknowledged finding and asset in the database as acknowledged?

    `acknowledged` holds, per write operation, the records its `acknowledge` made:
    create_finding (id, asset_id, reporter_id), create_asset (id, owner_id, name). Rows the data
    set was seeded with are not looked at; a record whose row is missing is lost, one whose row
    differs is corrupted.
    """
    findings_acknowledged = list(acknowledged.get("create_finding", ()))
    assets_acknowledged = list(acknowledged.get("create_asset", ()))
    async with engine.read() as session:
        findings = {
            int(r[0]): (int(r[1]), int(r[2]))
            for r in await session.fetch_all(
                "SELECT id, asset_id, reporter_id FROM findings WHERE id > ?", (sizes["findings"],)
            )
        }
        assets = {
            int(r[0]): (int(r[1]), str(r[2]))
            for r in await session.fetch_all(
                "SELECT id, owner_id, name FROM assets WHERE id > ?", (sizes["assets"],)
            )
        }
    lost = corrupted = 0
    examples = []
    for finding_id, asset_id, reporter_id in findings_acknowledged:
        found = findings.get(finding_id)
        if found == (asset_id, reporter_id):
            continue
        if found is None:
            lost += 1
        else:
            corrupted += 1
        examples.append(
            f"finding {finding_id} (asset {asset_id}, reporter {reporter_id}) was acknowledged but the "
            f"database has {found or 'no such finding'}"
        )
    for asset_id, owner_id, name in assets_acknowledged:
        found_asset = assets.get(asset_id)
        if found_asset == (owner_id, name):
            continue
        if found_asset is None:
            lost += 1
        else:
            corrupted += 1
        examples.append(
            f"asset {asset_id} (owner {owner_id}, {name!r}) was acknowledged but the database has "
            f"{found_asset or 'no such asset'}"
        )
    count = len(findings_acknowledged) + len(assets_acknowledged)
    return {
        "checked": True,
        "acknowledged": count,
        "present": count - lost,
        "lost": lost,
        "corrupted": corrupted,
        "examples": examples[:EXAMPLES],
        "violations": [],
        "what": "every acknowledged finding's asset and reporter, every acknowledged asset's owner and name",
    }
