"""The compliance app's tables and its deterministic data sets.

The tables are described with dbladder's dialect-neutral `Schema`, so every engine creates and
bulk-loads them by its own fastest path; the ORM (`models.py`) maps onto the same tables. Every
value is a pure function of (seed, table, row number): the same seed gives the same rows on every
engine, and any chunk can be made on its own.

Two data sets, as in "PostgreSQL vs SQLite, 2026 edition":
  empty       one user (an administrator), a freshly created schema and nothing else
  populated   1,000 assets and 7,500 findings at scale 1 (the post's "1,000 assets, 7,500
              incidents"), with 50 users, 100 controls, 50 assessments and per-object
              permissions; `--scale` multiplies the assets, assessments and findings.

Per-object permissions: user 1 is an administrator and sees everything; every other user holds a
row in `asset_permissions` for about 40 % of the assets (level 1 view, level 2 edit), so a list of
assets checks each row against that table, as an app with per-object permissions does. Which
user holds which grant does not depend on the seed (`permission_level`): the load generator picks
a user with a grant without reading the database.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...engines.base import Column, Engine, Index, Row, Schema, Table
from ...errors import InvalidConfig
from ...types import Sizes
from .. import hashing

ADMIN_USER_ID = 1
VIEW = 1  # asset_permissions.level: may see the asset and its findings
EDIT = 2  # may also add findings to it
# Of every 10 (user, asset) pairs: 1 grants edit, 3 grant view, 6 grant nothing.
EDIT_TENTHS = 1
VIEW_TENTHS = 4
SEVERITIES = 5  # 0 info .. 4 critical
FINDING_STATUSES = ("open", "in_progress", "mitigated", "accepted")
ASSET_KINDS = ("primary", "supporting")
ASSESSMENT_STATUSES = ("planned", "in_progress", "in_review", "done")
CONTROL_CATEGORIES = tuple(f"A.{n}" for n in range(5, 19))  # ISO 27001:2013 Annex A's chapters
PAGE_SIZE = 20  # assets on a page of the list endpoint
ASSET_NAME_LENGTH = 64  # assets.name
TITLE_LENGTH = 128  # findings.title
CREATED_FROM = 1_700_000_000  # unix seconds of the first row; row n is n minutes later

POPULATED: dict[str, int] = {
    "users": 50,
    "controls": 100,
    "assets": 1_000,
    "assessments": 50,
    "findings": 7_500,
}
EMPTY: dict[str, int] = {"users": 1, "controls": 0, "assets": 0, "assessments": 0, "findings": 0}
# The application's catalogue and its accounts do not grow with the data.
SCALED = ("assets", "assessments", "findings")
CHUNK_ROWS = 50_000

SCHEMA = Schema(
    tables=(
        Table(
            "users",
            (
                Column("id", "bigint"),
                Column("name", "text", max_length=64),
                Column("email", "text", max_length=128),
                Column("is_admin", "int"),
            ),
            primary_key=("id",),
        ),
        Table(
            "controls",
            (
                Column("id", "bigint"),
                Column("ref", "text", max_length=16),
                Column("name", "text", max_length=128),
                Column("category", "text", max_length=16),
            ),
            primary_key=("id",),
        ),
        Table(
            "assets",
            (
                Column("id", "bigint", generated_id=True),
                Column("name", "text", max_length=ASSET_NAME_LENGTH),
                Column("kind", "text", max_length=16),
                Column("criticality", "int"),
                Column("owner_id", "bigint"),
                Column("created_at", "bigint"),
                Column("updated_at", "bigint"),
            ),
            primary_key=("id",),
        ),
        Table(
            "assessments",
            (
                Column("id", "bigint"),
                Column("name", "text", max_length=64),
                Column("status", "text", max_length=16),
                Column("owner_id", "bigint"),
                Column("created_at", "bigint"),
            ),
            primary_key=("id",),
        ),
        Table(
            "findings",
            (
                Column("id", "bigint", generated_id=True),
                Column("asset_id", "bigint"),
                Column("assessment_id", "bigint"),
                Column("control_id", "bigint"),
                Column("title", "text", max_length=TITLE_LENGTH),
                Column("severity", "int"),
                Column("status", "text", max_length=16),
                Column("reporter_id", "bigint"),
                Column("created_at", "bigint"),
            ),
            primary_key=("id",),
        ),
        Table(
            "asset_permissions",
            (
                Column("user_id", "bigint"),
                Column("asset_id", "bigint"),
                Column("level", "int"),
            ),
            # Starts with user_id: it is also the index for "the assets this user may see".
            primary_key=("user_id", "asset_id"),
        ),
    ),
    indexes=(
        Index("findings_asset", "findings", ("asset_id",)),
        Index("findings_assessment", "findings", ("assessment_id",)),
        Index("asset_permissions_asset", "asset_permissions", ("asset_id",)),
    ),
)


def scaled_sizes(scale: float, populated: bool = True) -> dict[str, int]:
    """The data set's sizes: the empty set, or the populated one with the scaled tables multiplied."""
    if not populated:
        return dict(EMPTY)
    return {name: round(count * scale) if name in SCALED else count for name, count in POPULATED.items()}


def validate_sizes(sizes: Sizes) -> list[str]:
    """Every problem with a set of sizes, each naming its table."""
    problems = [f"sizes lacks {name!r}" for name in POPULATED if name not in sizes]
    problems += [f"unknown table {name!r} in sizes" for name in sizes if name not in POPULATED]
    for name, count in sizes.items():
        if name in POPULATED and not 0 <= count <= 100_000_000:
            problems.append(f"{name} must be from 0 to 100,000,000, not {count}")
    if sizes.get("users", 1) < 1:
        problems.append("users must be at least 1 (user 1 is the administrator)")
    if sizes.get("findings", 0) and not (
        sizes.get("assets") and sizes.get("assessments") and sizes.get("controls")
    ):
        problems.append("findings need at least one asset, assessment and control to refer to")
    return problems


def checked_sizes(sizes: Sizes) -> dict[str, int]:
    """The sizes as a dict, or InvalidConfig listing every problem."""
    problems = validate_sizes(sizes)
    if problems:
        raise InvalidConfig(problems)
    return dict(sizes)


def planned_rows(sizes: Sizes) -> dict[str, int]:
    """How many rows each table will get (asset_permissions is counted by generating its keys)."""
    rows = {name: sizes[name] for name in POPULATED}
    rows["asset_permissions"] = sum(len(chunk) for chunk in _permission_chunks(1, sizes))
    return rows


# ---------------------------------------------------------------------------------------------
# splitmix64 over the row number (`hashing.py`), a stream per column drawn.

_STREAMS = {
    "kind": 1,
    "criticality": 2,
    "asset_owner": 3,
    "assessment_status": 4,
    "assessment_owner": 5,
    "finding_asset": 6,
    "finding_assessment": 7,
    "finding_control": 8,
    "severity": 9,
    "finding_status": 10,
    "reporter": 11,
    "category": 12,
    "permission": 13,
}


def _below(seed: int, stream: str, index: np.ndarray, bound: int) -> np.ndarray:
    """A value from 0 to bound-1 for each index, as int64."""
    return hashing.below(seed, _STREAMS[stream], index, bound)


def _id_chunks(count: int) -> Iterator[np.ndarray]:
    for start in range(1, count + 1, CHUNK_ROWS):
        yield np.arange(start, min(start + CHUNK_ROWS, count + 1), dtype=np.int64)


def _created(ids: np.ndarray) -> list[int]:
    return (CREATED_FROM + 60 * ids).tolist()


def _pick(names: tuple[str, ...], numbers: np.ndarray) -> list[str]:
    return [names[n] for n in numbers.tolist()]


def user_rows(seed: int, sizes: Sizes) -> Iterator[list[Row]]:
    """(id, name, email, is_admin); user 1 is the administrator."""
    for ids in _id_chunks(sizes["users"]):
        yield [
            (i, f"user-{i:04d}", f"user-{i:04d}@example.com", int(i == ADMIN_USER_ID)) for i in ids.tolist()
        ]


def control_rows(seed: int, sizes: Sizes) -> Iterator[list[Row]]:
    """(id, ref, name, category)."""
    for ids in _id_chunks(sizes["controls"]):
        categories = _pick(CONTROL_CATEGORIES, _below(seed, "category", ids, len(CONTROL_CATEGORIES)))
        yield [
            (i, f"C-{i:03d}", f"control {i} of {category}", category)
            for i, category in zip(ids.tolist(), categories, strict=True)
        ]


def asset_rows(seed: int, sizes: Sizes) -> Iterator[list[Row]]:
    """(id, name, kind, criticality, owner_id, created_at, updated_at)."""
    for ids in _id_chunks(sizes["assets"]):
        created = _created(ids)
        yield list(
            zip(
                ids.tolist(),
                [f"asset-{i:06d}" for i in ids.tolist()],
                _pick(ASSET_KINDS, _below(seed, "kind", ids, len(ASSET_KINDS))),
                (1 + _below(seed, "criticality", ids, 4)).tolist(),
                (1 + _below(seed, "asset_owner", ids, sizes["users"])).tolist(),
                created,
                created,
                strict=True,
            )
        )


def assessment_rows(seed: int, sizes: Sizes) -> Iterator[list[Row]]:
    """(id, name, status, owner_id, created_at)."""
    for ids in _id_chunks(sizes["assessments"]):
        yield list(
            zip(
                ids.tolist(),
                [f"assessment {i}" for i in ids.tolist()],
                _pick(ASSESSMENT_STATUSES, _below(seed, "assessment_status", ids, len(ASSESSMENT_STATUSES))),
                (1 + _below(seed, "assessment_owner", ids, sizes["users"])).tolist(),
                _created(ids),
                strict=True,
            )
        )


def finding_rows(seed: int, sizes: Sizes) -> Iterator[list[Row]]:
    """(id, asset_id, assessment_id, control_id, title, severity, status, reporter_id, created_at)."""
    for ids in _id_chunks(sizes["findings"]):
        assets = (1 + _below(seed, "finding_asset", ids, sizes["assets"])).tolist()
        yield list(
            zip(
                ids.tolist(),
                assets,
                (1 + _below(seed, "finding_assessment", ids, sizes["assessments"])).tolist(),
                (1 + _below(seed, "finding_control", ids, sizes["controls"])).tolist(),
                [f"finding {i} on asset {a}" for i, a in zip(ids.tolist(), assets, strict=True)],
                _below(seed, "severity", ids, SEVERITIES).tolist(),
                _pick(FINDING_STATUSES, _below(seed, "finding_status", ids, len(FINDING_STATUSES))),
                (1 + _below(seed, "reporter", ids, sizes["users"])).tolist(),
                _created(ids),
                strict=True,
            )
        )


def permission_level(user_id: int, asset_ids: np.ndarray) -> np.ndarray:
    """The level user `user_id` holds on each asset: 0 none, VIEW or EDIT (the administrator: none needed).

    The same for every seed, so that the load generator can pick a user who holds a grant
    without reading the database.
    """
    # One hash stream over (user, asset) pairs: the pair's number is user * 2**32 + asset.
    tenths = _below(0, "permission", (np.int64(user_id) << np.int64(32)) + asset_ids, 10)
    return np.where(tenths < EDIT_TENTHS, EDIT, np.where(tenths < VIEW_TENTHS, VIEW, 0))


def _permission_chunks(seed: int, sizes: Sizes) -> Iterator[list[Row]]:
    chunk: list[Row] = []
    for user_id in range(ADMIN_USER_ID + 1, sizes["users"] + 1):
        for asset_ids in _id_chunks(sizes["assets"]):
            levels = permission_level(user_id, asset_ids)
            granted = levels > 0
            chunk.extend(
                zip(
                    [user_id] * int(granted.sum()),
                    asset_ids[granted].tolist(),
                    levels[granted].tolist(),
                    strict=True,
                )
            )
            if len(chunk) >= CHUNK_ROWS:
                yield chunk
                chunk = []
    if chunk:
        yield chunk


def permission_rows(seed: int, sizes: Sizes) -> Iterator[list[Row]]:
    """(user_id, asset_id, level) for every grant, in primary-key order."""
    return _permission_chunks(seed, sizes)


def generate(seed: int, sizes: Sizes) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
    """(table, chunks of rows) for every table, in load order; the same rows on every engine."""
    checked = checked_sizes(sizes)
    makers = (user_rows, control_rows, asset_rows, assessment_rows, finding_rows, permission_rows)
    for table, make in zip(SCHEMA.tables, makers, strict=True):
        yield table, make(seed, checked)


async def load(engine: Engine, seed: int, sizes: Sizes) -> dict[str, int]:
    """Replace the app's tables with the data set for (seed, sizes); the rows loaded per table.

    The simple path for tests and benchmarks; dbladder's seeding does the same with progress.
    """
    await engine.recreate_schema(SCHEMA)
    loaded = {}
    for table, chunks in generate(seed, sizes):
        loaded[table.name] = 0
        for chunk in chunks:
            await engine.bulk_load(table, chunk)
            loaded[table.name] += len(chunk)
    await engine.finish_load(SCHEMA)
    return loaded
