"""The engine contract: the same tests against SQLite, PostgreSQL and MariaDB."""

import asyncio
import os
import socket

import psutil
import pytest

from dbladder.engines import EngineOptions, create_engine, opened
from dbladder.engines.base import Column, Index, Schema, Table
from dbladder.engines.dialect import dialect_of
from dbladder.errors import PoolTimeout, TransportUnavailable
from dbladder.observe import database_processes
from dbladder.urls import parse_url, with_password

THINGS = Table(
    "things",
    (
        Column("id", "bigint", generated_id=True),
        Column("label", "text", max_length=20),
        Column("size", "int"),
    ),
    primary_key=("id",),
)
SCHEMA = Schema(tables=(THINGS,), indexes=(Index("things_label", "things", ("label",)),))


def run(coroutine):
    return asyncio.run(coroutine)


def test_describe_reports_versions_and_durability(any_url):
    async def scenario():
        async with opened(any_url, EngineOptions(pool_size=7)) as engine:
            return await engine.describe()

    info = run(scenario())
    assert info.engine in ("sqlite", "postgresql", "mariadb")
    assert info.server_version and info.server_version[0].isdigit()
    assert info.driver and info.driver_version
    assert info.pool_size == 7
    assert info.durability, "durability settings must be reported"
    # The local servers and SQLite's defaults acknowledge a write only after it reaches the disk.
    assert info.durable is True and info.durability_warning is None
    assert set(info.to_dict()) >= {"engine", "server_version", "driver", "durable", "durability", "isolation"}


def test_schema_bulk_load_and_generated_ids(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await engine.recreate_schema(SCHEMA)
            assert await engine.table_exists("things")
            await engine.bulk_load(THINGS, ((i, f"label {i % 3}", i * 10) for i in range(1, 101)))
            await engine.finish_load(SCHEMA)
            async with engine.read() as session:
                count = await session.fetch_one("SELECT count(*) FROM things")
                rows = await session.fetch_all(
                    "SELECT id, size FROM things WHERE label = ? ORDER BY id", ("label 1",)
                )
            async with engine.transaction() as session:
                new_id = await session.fetch_one(
                    "INSERT INTO things (label, size) VALUES (?, ?) RETURNING id", ("new", 5)
                )
            # Recreating empties the table again.
            await engine.recreate_schema(SCHEMA)
            async with engine.read() as session:
                after = await session.fetch_one("SELECT count(*) FROM things")
            return count, rows, new_id, after

    count, rows, new_id, after = run(scenario())
    assert count[0] == 100
    assert [tuple(r) for r in rows[:3]] == [(1, 10), (4, 40), (7, 70)] and len(rows) == 34
    assert new_id[0] == 101, "the id generator must continue after the loaded ids"
    assert after[0] == 0


def test_execute_returns_rows_changed_and_transactions_roll_back(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await engine.recreate_schema(SCHEMA)
            await engine.bulk_load(THINGS, [(1, "a", 1), (2, "b", 2), (3, "b", 3)])
            await engine.finish_load(SCHEMA)
            async with engine.transaction() as session:
                changed = await session.execute("UPDATE things SET size = size + 1 WHERE label = ?", ("b",))
                unchanged = await session.execute("UPDATE things SET size = 0 WHERE id = ?", (999,))
            with pytest.raises(RuntimeError):
                async with engine.transaction() as session:
                    await session.execute("UPDATE things SET size = 100 WHERE id = ?", (1,))
                    raise RuntimeError("abort")
            async with engine.read() as session:
                sizes = await session.fetch_all("SELECT size FROM things ORDER BY id")
                missing = await session.fetch_one("SELECT size FROM things WHERE id = ?", (42,))
            return changed, unchanged, sizes, missing

    changed, unchanged, sizes, missing = run(scenario())
    assert (changed, unchanged) == (2, 0)
    assert [r[0] for r in sizes] == [1, 3, 4], "the rolled-back update must not be visible"
    assert missing is None


def test_a_busy_pool_raises_pool_timeout(any_url):
    async def scenario():
        async with opened(any_url, EngineOptions(pool_size=1, pool_timeout=0.1)) as engine:
            async with engine.read():
                with pytest.raises(PoolTimeout):
                    async with engine.read():
                        pass
            # The connection is back: a new read works.
            async with engine.read() as session:
                return await session.fetch_one("SELECT 1")

    assert run(scenario())[0] == 1


def test_create_engine_rejects_bad_options():
    from dbladder.errors import InvalidConfig

    with pytest.raises(InvalidConfig, match="pool_size") as caught:
        create_engine("sqlite:///x.db", EngineOptions(pool_size=0, pool_timeout=0))
    assert len(caught.value.problems) == 2


# Every column type, at the edges of its range; bools given as bool and as int.
VALUES = Table(
    "vals",
    (
        Column("id", "bigint"),
        Column("small", "int"),
        Column("big", "bigint"),
        Column("ratio", "double"),
        Column("done", "bool"),
        Column("code", "text", max_length=5),
        Column("body", "text"),
    ),
    primary_key=("id",),
)
VALUE_ROWS = [
    (1, -(2**31), 2**63 - 1, 0.1, 0, "héllo", "x" * 1000),
    (2, 2**31 - 1, -(2**63), 3, True, "", "ü"),
    (3, 0, 0, -2.5e-300, False, "a", ""),
    (4, 7, 7, 1e300, 1, "€uro", "line\nbreak"),
]
# As every engine gives them back: bools as 0 and 1, doubles as floats.
EXPECTED_ROWS = [
    (1, -(2**31), 2**63 - 1, 0.1, 0, "héllo", "x" * 1000),
    (2, 2**31 - 1, -(2**63), 3.0, 1, "", "ü"),
    (3, 0, 0, -2.5e-300, 0, "a", ""),
    (4, 7, 7, 1e300, 1, "€uro", "line\nbreak"),
]


def test_every_column_type_reads_back_the_same_on_every_engine(sqlite_url, postgres_url, mariadb_url):
    async def load_and_read(url):
        async with opened(url) as engine:
            schema = Schema(tables=(VALUES,))
            await engine.recreate_schema(schema)
            await engine.bulk_load(VALUES, VALUE_ROWS[:3])
            await engine.finish_load(schema)
            async with engine.transaction() as session:
                await session.execute("INSERT INTO vals VALUES (?, ?, ?, ?, ?, ?, ?)", VALUE_ROWS[3])
            async with engine.read() as session:
                rows = await session.fetch_all("SELECT * FROM vals ORDER BY id")
                done = await session.fetch_all("SELECT id FROM vals WHERE done = ? ORDER BY id", (1,))
            return [tuple(row) for row in rows], [row[0] for row in done]

    for url in (sqlite_url, postgres_url, mariadb_url):
        rows, done = run(load_and_read(url))
        assert rows == EXPECTED_ROWS, url
        assert [type(value) for value in rows[1]] == [int, int, int, float, int, str, str], url
        assert done == [2, 4], url


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("small", 2**31),
        ("done", 2),
        ("code", "abcdef"),
        ("ratio", "text"),
        ("ratio", float("nan")),
        ("ratio", float("inf")),
        ("ratio", float("-inf")),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_on_every_engine(any_url, column, value):
    async def scenario():
        async with opened(any_url) as engine:
            schema = Schema(tables=(VALUES,))
            await engine.recreate_schema(schema)
            row = dict(zip(VALUES.column_names, EXPECTED_ROWS[0], strict=True))
            row[column] = value
            with pytest.raises(Exception) as caught:  # each driver has its own error class
                async with engine.transaction() as session:
                    await session.execute(
                        "INSERT INTO vals VALUES (?, ?, ?, ?, ?, ?, ?)", tuple(row.values())
                    )
            async with engine.read() as session:
                count = await session.fetch_one("SELECT count(*) FROM vals")
            return caught.value, count[0]

    error, count = run(scenario())
    assert count == 0
    assert not isinstance(error, AssertionError)


def test_sqlite_tables_are_strict(sqlite_url):
    async def scenario():
        async with opened(sqlite_url) as engine:
            await engine.recreate_schema(SCHEMA)
            async with engine.read() as session:
                return await session.fetch_one("SELECT strict FROM pragma_table_list WHERE name = 'things'")

    assert run(scenario()) == (1,)


def test_a_schema_with_an_unknown_type_is_refused_naming_table_and_column(sqlite_url):
    from dbladder.errors import InvalidConfig

    bad = Schema(
        tables=(
            Table(
                "notes",
                (Column("id", "bigint", generated_id=True), Column("at", "timestamp"), Column("n", "float")),
                ("id",),
            ),
        ),
        indexes=(Index("notes_when", "notes", ("when",)),),
    )
    problems = bad.validate()
    assert problems == [
        "table 'notes', column 'at': unknown type 'timestamp'; the types are int, bigint, double, bool, text",
        "table 'notes', column 'n': unknown type 'float'; the types are int, bigint, double, bool, text",
        "index 'notes_when': table 'notes' has no column 'when'",
    ]
    assert SCHEMA.validate() == []

    async def scenario():
        async with opened(sqlite_url) as engine:
            with pytest.raises(InvalidConfig) as caught:
                await engine.recreate_schema(bad)
            return caught.value, await engine.table_exists("notes")

    error, created = run(scenario())
    assert error.problems == problems and "table 'notes', column 'at'" in str(error)
    assert created is False, "nothing is created from a schema that does not validate"


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        (Table("t", (Column("id", "text", generated_id=True),), ("id",)), "a generated id is a whole number"),
        (
            Table("t", (Column("id", "bigint", generated_id=True), Column("k", "int")), ("k",)),
            "whole primary key",
        ),
        (Table("t", (Column("id", "bigint"),), ("nope",)), "names 'nope', which is not a column"),
        (Table("t", (Column("id", "bigint"), Column("id", "int")), ("id",)), "'id' appears more than once"),
        (Table("t", (Column("n", "int", max_length=3),), ("n",)), "max_length applies to text only"),
        (Table("t; drop", (Column("id", "bigint"),), ("id",)), "letters, digits and _"),
    ],
)
def test_schema_validation_names_each_problem(table, problem):
    problems = Schema(tables=(table,)).validate()
    assert len(problems) == 1 and problem in problems[0], problems


def test_check_statements_reports_what_the_engine_refuses_without_running_anything(any_url):
    statements = [
        "SELECT label, size FROM things WHERE id = ?",
        "SELEC label FROM things",
        "SELECT * FROM no_such_table WHERE id = ?",
        "UPDATE things SET size = ? WHERE id = ?",
        "DELETE FROM things WHERE id > ?",
        "DROP TABLE things",
        "SELECT 1; SELECT 2",
        "   ",
    ]

    async def scenario():
        async with opened(any_url, EngineOptions(pool_size=1)) as engine:
            await engine.recreate_schema(SCHEMA)
            await engine.bulk_load(THINGS, [(1, "a", 1), (2, "b", 2)])
            await engine.finish_load(SCHEMA)
            problems = await engine.check_statements(statements)
            # Nothing ran: the rows and the table are still there, and the one connection is usable.
            async with engine.read() as session:
                rows = await session.fetch_all("SELECT id, size FROM things ORDER BY id")
            return problems, [tuple(row) for row in rows]

    problems, rows = run(scenario())
    assert rows == [(1, 1), (2, 2)]
    assert [p.statement for p in problems] == [statements[1], statements[2], statements[6], statements[7]]
    syntax, unknown, two, blank = (p.message for p in problems)
    assert "syntax" in syntax.lower() and "SELEC" in syntax
    assert "no_such_table" in unknown
    assert two, "a text of two statements is refused"
    assert blank
    assert all("\n" not in p.message for p in problems), "first line only"


def test_check_statements_of_good_sql_finds_nothing(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await engine.recreate_schema(SCHEMA)
            return await engine.check_statements(
                [
                    "SELECT id, label FROM things WHERE label = ? ORDER BY id LIMIT 10",
                    "INSERT INTO things (label, size) VALUES (?, ?) RETURNING id",
                    "SELECT 1",
                ]
            )

    assert run(scenario()) == []


# ---------------------------------------------------------------------------------------------
# The dialect: what dbladder asks of an engine outside a session, on each real engine.


def test_the_dialect_and_the_url_agree_on_the_kind_of_engine(any_url):
    url = parse_url(any_url)
    dialect = dialect_of(url)
    assert dialect.kind is url.kind and dialect_of(url.engine) is dialect
    info = run(_described(url))
    assert info.engine == url.kind.name and dialect_of(info.engine) is dialect
    # An in-process engine has nothing to reach or install; a server has an address and a client.
    assert url.kind.has_server is (not url.kind.in_process)
    assert (dialect.endpoint(url) is None) is url.kind.in_process
    assert (dialect.transport_of(url) == "inproc") is url.kind.in_process
    assert (dialect.native_client.install is None) is url.kind.in_process
    assert bool(dialect.process_names) is url.kind.has_server


def test_a_server_listens_where_its_dialect_says(any_url):
    url = parse_url(any_url)
    endpoint = dialect_of(url).endpoint(url)
    if url.kind.in_process:
        assert endpoint is None and database_processes(url).root_pid is None
        return
    assert endpoint is not None
    family = socket.AF_UNIX if endpoint.unix_path else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        probe.connect(endpoint.unix_path or (endpoint.host, endpoint.port))
    # The server's own processes carry one of the names the dialect looks for.
    found = database_processes(url)
    assert found.root_pid is not None
    assert psutil.Process(found.root_pid).name() in dialect_of(url).process_names


def test_a_server_is_reached_by_its_other_transport(any_url):
    url = parse_url(any_url)
    if url.kind.in_process:
        return  # SQLite has no transport but inproc (tests/transport/test_addresses.py)
    dialect = dialect_of(url)
    other = "unix" if dialect.transport_of(url) == "tcp" else "tcp"
    try:
        reached = run(dialect.reach(url, other))
    except TransportUnavailable as exc:
        pytest.skip(f"this server does not listen over {other}: {exc}")
    assert dialect.transport_of(reached) == other and reached.database == url.database
    assert run(_described(reached)).engine == url.engine


def test_the_durability_wording_names_the_settings_the_engine_reported(any_url):
    url = parse_url(any_url)
    info = run(_described(url))
    durability = dialect_of(url).durability(info)
    assert durability.promise.startswith(url.kind.label + " with ")
    for value in info.durability.values():
        if f"={value}" in durability.promise:
            break
    else:
        raise AssertionError(f"none of {info.durability} in {durability.promise!r}")
    # The local servers and SQLite's defaults are durable: a kill -9 cannot lose a commit.
    assert info.durable and ("cannot lose" in durability.loses or durability.loses.startswith("neither"))
    assert "kill-db" in dialect_of(url).data_holders or "kill-service" in dialect_of(url).data_holders


def test_the_page_cache_is_what_holds_the_engine_s_pages(any_url):
    url = parse_url(any_url)
    info = run(_described(url))
    size, basis = dialect_of(url).page_cache(info.settings, 8 * 2**30)
    assert size is not None and size > 0 and basis
    if url.kind.has_server and size != 8 * 2**30:  # MariaDB's buffer pool, as the server reported it
        assert basis == "innodb_buffer_pool_size" and str(size) == info.settings[basis]


def test_the_orm_reaches_every_engine_through_its_dialect(any_url):
    url = with_password(parse_url(any_url), os.environ)
    dialect = dialect_of(url)
    layer = dialect.orm_data_layer()
    assert set(layer) == {"driver", "note"} and layer["driver"].split()[0] in (
        "sqlite3",
        "asyncpg",
        "asyncmy",
    )

    async def scenario():
        engine = dialect.orm_engine(url, EngineOptions(pool_size=1), "pysqlite")
        try:
            if url.kind.in_process:  # a plain engine over pysqlite, inline on the loop
                with engine.connect() as connection:
                    return connection.exec_driver_sql("SELECT 1").scalar()
            async with engine.connect() as connection:
                return (await connection.exec_driver_sql("SELECT 1")).scalar()
        finally:
            if url.kind.in_process:
                engine.dispose()
            else:
                await engine.dispose()

    assert run(scenario()) == 1


async def _described(url):
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        return await engine.describe()
