"""Keys on every engine: unique indexes, a duplicate key as DuplicateKey, and clustered tables."""

from __future__ import annotations

import asyncio

import pytest

from dbladder.engines import opened
from dbladder.engines.base import Column, Index, Schema, Table
from dbladder.errors import DuplicateKey

PEOPLE = Table(
    "people",
    (Column("id", "bigint", generated_id=True), Column("handle", "text", max_length=20)),
    primary_key=("id",),
)
PAIRS = Table(
    "pairs",
    (Column("a", "bigint"), Column("b", "bigint"), Column("at", "bigint")),
    primary_key=("a", "b"),
    clustered=True,
)
SCHEMA = Schema(
    tables=(PEOPLE, PAIRS),
    indexes=(Index("people_handle", "people", ("handle",), unique=True), Index("pairs_b", "pairs", ("b",))),
)


def test_a_duplicate_key_rolls_back_and_raises_duplicate_key_on_every_engine(any_url: str) -> None:
    async def scenario() -> tuple[list[str], int, int, list[tuple]]:
        caught = []
        async with opened(any_url) as engine:
            await engine.recreate_schema(SCHEMA)
            await engine.bulk_load(PEOPLE, [(1, "ana"), (2, "ben")])
            await engine.bulk_load(PAIRS, [(2, 1, 10), (1, 2, 10), (1, 1, 10)])
            await engine.finish_load(SCHEMA)
            # A unique index, and a composite primary key, each after a write that must be undone.
            new_person = ("INSERT INTO people (handle) VALUES (?)", ("cleo",))
            taken_handle = ("UPDATE people SET handle = ? WHERE id = ?", ("ben", 1))
            new_pair = ("INSERT INTO pairs (a, b, at) VALUES (?, ?, ?)", (3, 3, 1))
            taken_pair = ("INSERT INTO pairs (a, b, at) VALUES (?, ?, ?)", (1, 2, 20))
            for statements in ([new_person, taken_handle], [new_pair, taken_pair]):
                try:
                    async with engine.transaction() as session:
                        for sql, args in statements:
                            await session.execute(sql, args)
                except DuplicateKey as exc:
                    caught.append(exc.code)
                    assert exc.__cause__ is not None, "the driver's error stays attached"
            # The connection is usable after the failure, and nothing of either transaction stayed.
            async with engine.read() as session:
                people = (await session.fetch_one("SELECT count(*) FROM people"))[0]  # type: ignore[index]
                stamp = (await session.fetch_one("SELECT at FROM pairs WHERE a = 1 AND b = 2"))[0]  # type: ignore[index]
                pairs = await session.fetch_all("SELECT a, b FROM pairs ORDER BY a, b")
        return caught, people, stamp, [tuple(row) for row in pairs]

    caught, people, stamp, pairs = asyncio.run(scenario())
    assert caught == ["duplicate_key", "duplicate_key"]
    assert people == 2 and stamp == 10
    assert pairs == [(1, 1), (1, 2), (2, 1)]


def test_other_constraint_failures_are_not_duplicate_keys(any_url: str) -> None:
    async def scenario() -> BaseException | None:
        async with opened(any_url) as engine:
            await engine.recreate_schema(SCHEMA)
            await engine.finish_load(SCHEMA)
            try:
                async with engine.transaction() as session:
                    await session.execute("INSERT INTO people (handle) VALUES (?)", ("x" * 21,))
            except Exception as exc:
                return exc
        return None

    raised = asyncio.run(scenario())
    assert raised is not None and not isinstance(raised, DuplicateKey)


def test_a_clustered_table_is_without_rowid_on_sqlite(sqlite_url: str) -> None:
    async def scenario() -> dict[str, str]:
        async with opened(sqlite_url) as engine:
            await engine.recreate_schema(SCHEMA)
            await engine.finish_load(SCHEMA)
            async with engine.read() as session:
                rows = await session.fetch_all("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
                unique = await session.fetch_one("SELECT sql FROM sqlite_master WHERE name = 'people_handle'")
        return {**{name: sql for name, sql in rows}, "people_handle": unique[0]}  # type: ignore[index]

    ddl = asyncio.run(scenario())
    assert ddl["pairs"].endswith("STRICT, WITHOUT ROWID")
    assert ddl["people"].endswith("STRICT") and "WITHOUT ROWID" not in ddl["people"]
    assert ddl["people_handle"].startswith("CREATE UNIQUE INDEX")


def test_a_clustered_table_cannot_have_a_generated_id() -> None:
    table = Table("t", (Column("id", "bigint", generated_id=True),), ("id",), clustered=True)
    assert table.validate() == ["table 't': a clustered table cannot have a generated id ('id')"]


@pytest.mark.parametrize("unique, expected", [(False, "CREATE INDEX"), (True, "CREATE UNIQUE INDEX")])
def test_index_sql(unique: bool, expected: str) -> None:
    index = Index("t_ab", "t", ("a", "b"), unique=unique)
    assert index.create_sql() == f"{expected} IF NOT EXISTS t_ab ON t (a, b)"
