"""After a run: the data set's sizes read back, and every acknowledged write found in the database.

These read through dbladder's engine (plain SQL), not the ORM, so a check does not trust the
code it checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...engines.base import Engine
from .data import POPULATED, Sizes

# An acknowledged write, as `acknowledge` makes it from the answer's body:
#   ("finding", id, asset_id, reporter_id)  or  ("asset", id, owner_id)
Acknowledged = tuple[Any, ...]


def acknowledge(body: Any) -> Acknowledged:
    """The compact record of a write from its answer's body (create_finding or create_asset)."""
    if "asset_id" in body:
        return ("finding", int(body["id"]), int(body["asset_id"]), int(body["reporter_id"]))
    return ("asset", int(body["id"]), int(body["owner_id"]))


async def sizes_in(engine: Engine) -> dict[str, int]:
    """The sizes of the data set in a seeded database (rows per table; written rows count too)."""
    sizes = {}
    async with engine.read() as session:
        for table in POPULATED:
            row = await session.fetch_one(f"SELECT count(*) FROM {table}")
            sizes[table] = int(row[0]) if row else 0
    return sizes


async def verify(engine: Engine, sizes: Sizes, acknowledged: Iterable[Acknowledged]) -> list[str]:
    """Every acknowledged write that the database does not hold as acknowledged, one line each."""
    problems = []
    records = list(acknowledged)
    async with engine.read() as session:
        findings = {
            int(r[0]): (int(r[1]), int(r[2]))
            for r in await session.fetch_all(
                "SELECT id, asset_id, reporter_id FROM findings WHERE id > ?", (sizes["findings"],)
            )
        }
        assets = {
            int(r[0]): int(r[1])
            for r in await session.fetch_all(
                "SELECT id, owner_id FROM assets WHERE id > ?", (sizes["assets"],)
            )
        }
    for record in records:
        if record[0] == "finding":
            _, finding_id, asset_id, reporter_id = record
            if findings.get(finding_id) != (asset_id, reporter_id):
                problems.append(
                    f"finding {finding_id} (asset {asset_id}, reporter {reporter_id}) was acknowledged "
                    f"but the database has {findings.get(finding_id) or 'no such finding'}"
                )
        else:
            _, asset_id, owner_id = record
            if assets.get(asset_id) != owner_id:
                problems.append(
                    f"asset {asset_id} (owner {owner_id}) was acknowledged but the database has "
                    f"{'owner ' + str(assets[asset_id]) if asset_id in assets else 'no such asset'}"
                )
    return problems
