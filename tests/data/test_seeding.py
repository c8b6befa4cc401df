"""Seeding's own refusals: rows that repeat a key, from a workload that makes its rows itself."""

import asyncio

import pytest

from dbladder.data.seeding import row_counts, seed, seed_database
from dbladder.engines import opened
from dbladder.workloads.base import DataSpec, WorkloadError
from dbladder.workloads.declare import App, Column, Index, Param, Query, Table
from dbladder.workloads.registry import load_workload


class Unchecked(App):
    """A declared app whose rows skip the declare layer's checks, as a workload written against
    workloads/base.py directly makes its own: what is left to catch them is the engine."""

    def __init__(self, rows):
        super().__init__(
            name="unchecked",
            tables=[
                Table("t", [Column("id", "bigint"), Column("tag", "text", max_length=8)], primary_key=["id"])
            ],
            indexes=[Index("t_by_tag", "t", ("tag",), unique=True)],
            sizes={"t": len(rows)},
            operations=[
                Query("one", "GET /t/{id}", "SELECT tag FROM t WHERE id = ?", params={"id": Param.row("t")})
            ],
        )
        self.source = "unchecked.py"
        self._given = rows

    def generate(self, data):
        yield self.schema.tables[0], iter([self._given])


def refusal(url, rows):
    async def scenario():
        async with opened(url) as engine:
            await seed(engine, Unchecked(rows), DataSpec(1, {"t": len(rows)}))

    with pytest.raises(WorkloadError) as caught:
        asyncio.run(scenario())
    return str(caught.value)


def test_a_repeated_primary_key_is_one_line_naming_the_table_on_every_engine(any_url):
    message = refusal(any_url, [(1, "a"), (2, "b"), (2, "c"), (4, "d")])
    engine = any_url.split(":")[0]
    loaded = "unchecked.py: the rows of table 't' repeat a key, which the engine refused once it had"
    expected = {
        "sqlite": f"{loaded} 3 of them: SQLite: UNIQUE constraint failed: t.id",
        "mariadb": f"{loaded} 4 of them: MariaDB: Duplicate entry '2' for key 'PRIMARY'",
        # PostgreSQL builds the key after the COPY, so it sees the repeat only then.
        "postgresql": "unchecked.py: the rows repeat a key, refused as the keys were built: "
        'PostgreSQL: could not create unique index "t_pkey"; Key (id)=(2) is duplicated.',
    }[engine]
    assert message == expected


def test_a_repeated_unique_index_value_is_refused_as_the_index_is_built(any_url):
    message = refusal(any_url, [(1, "a"), (2, "b"), (3, "b")])
    assert message.startswith("unchecked.py: the rows repeat a key, refused as the keys were built: ")
    assert "t_by_tag" in message or "t.tag" in message or "'b'" in message


def test_seed_database_tells_the_engine_then_each_tables_rows(tmp_path):
    url = f"sqlite:///{tmp_path}/shop.db"
    workload = load_workload("shop")
    data = DataSpec(1, {"products": 50, "orders": 20})
    heard: list[object] = []
    loaded: dict[str, int] = {}

    def started(info):
        heard.append(info.engine)
        return lambda table, rows: loaded.__setitem__(table, loaded.get(table, 0) + rows)

    report = asyncio.run(seed_database(url, workload, data, started))
    assert heard == ["sqlite"] and loaded == {"products": 50, "orders": 20, "order_items": 40}
    assert report.rows == 110

    async def counts():
        async with opened(url) as engine:
            return await row_counts(engine, workload.schema)

    assert asyncio.run(counts()) == loaded


class Chunked(Unchecked):
    """The same app, its rows in many small chunks: an engine loading with several streams
    (`load_streams`) splits them between its connections."""

    def __init__(self, rows, chunk):
        super().__init__(rows)
        self._chunk = chunk

    def generate(self, data):
        given, size = self._given, self._chunk
        yield self.schema.tables[0], iter([given[i : i + size] for i in range(0, len(given), size)])


def test_every_row_goes_in_once_whatever_the_engines_streams(any_url):
    rows = [(i, f"t{i}") for i in range(1, 2_001)]
    app = Chunked(rows, chunk=50)

    async def scenario():
        async with opened(any_url) as engine:
            report = await seed(engine, app, DataSpec(1, {"t": len(rows)}))
            async with engine.read() as session:
                loaded = await session.fetch_all("SELECT id, tag FROM t ORDER BY id")
            return report, loaded

    # 40 chunks to share: on MariaDB's two streams each takes the next chunk as it is free.
    report, loaded = asyncio.run(scenario())
    assert [tuple(row) for row in loaded] == rows
    assert report.rows == len(rows)
