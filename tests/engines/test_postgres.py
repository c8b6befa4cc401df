"""The PostgreSQL engine against the local server: each test gets its own fresh database."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid

import asyncpg
import pytest

from dbladder.data.seeding import seed_shop
from dbladder.engines import EngineOptions, create_engine, opened
from dbladder.engines.postgres.connection import rewrite_placeholders
from dbladder.errors import AuthenticationFailed, BadURL, MissingDatabase, ServerUnreachable
from dbladder.urls import parse_url
from dbladder.workloads import shop

SOCKET_FOLDER = "/var/run/postgresql"


def socket_url(postgres_url: str) -> str:
    """The fixture's database, over the local Unix socket instead of TCP."""
    url = parse_url(postgres_url)
    return f"postgresql://{url.user}@/{url.database}?host={SOCKET_FOLDER}"


async def backend_pid(engine) -> int:
    async with engine.read() as session:
        row = await session.fetch_one("SELECT pg_backend_pid()")
    return row[0]


def test_tcp_and_unix_socket_urls_reach_the_same_database(postgres_url):
    name = parse_url(postgres_url).database

    async def check(url: str) -> tuple[str, str]:
        async with opened(url) as engine:
            async with engine.read() as session:
                row = await session.fetch_one("SELECT current_database(), inet_server_addr()::text")
            info = await engine.describe()
        assert row is not None
        assert row[0] == name
        return info.transport, row[1]

    tcp_transport, tcp_address = asyncio.run(check(postgres_url))
    socket_transport, socket_address = asyncio.run(check(socket_url(postgres_url)))
    assert tcp_transport == "tcp 127.0.0.1:5432"
    assert tcp_address == "127.0.0.1/32"
    assert socket_transport == f"unix socket {SOCKET_FOLDER}"
    assert socket_address is None  # the server sees no IP address on a Unix socket


def test_question_marks_become_numbered_placeholders_outside_quotes_and_comments():
    assert (
        rewrite_placeholders("SELECT a FROM t WHERE b = ? AND c > ?")
        == "SELECT a FROM t WHERE b = $1 AND c > $2"
    )
    assert rewrite_placeholders("SELECT '?', 'it''s ?', \"?\" FROM t WHERE x = ?") == (
        "SELECT '?', 'it''s ?', \"?\" FROM t WHERE x = $1"
    )
    assert rewrite_placeholders("SELECT ? -- why?\n, /* or ? */ ?") == "SELECT $1 -- why?\n, /* or ? */ $2"
    assert rewrite_placeholders("SELECT 1") == "SELECT 1"
    assert rewrite_placeholders(shop.INSERT_ITEM).endswith("VALUES ($1, $2, $3, $4)")


def test_placeholders_bind_in_order_on_the_server(postgres_url):
    async def run():
        async with opened(postgres_url) as engine, engine.read() as session:
            return await session.fetch_one("SELECT ?::int - ?::int, ?::text, '?'", (10, 3, "x"))

    assert asyncio.run(run()) == (7, "x", "?")


def test_execute_returns_the_number_of_rows_changed(postgres_url):
    async def run():
        async with opened(postgres_url) as engine, engine.read() as session:
            counts = [await session.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")]
            for i in range(5):
                counts.append(await session.execute("INSERT INTO t (id, n) VALUES (?, ?)", (i, i * 10)))
            counts.append(await session.execute("UPDATE t SET n = n + 1 WHERE id >= ?", (2,)))
            counts.append(await session.execute("UPDATE t SET n = n + 1 WHERE id > ?", (100,)))
            counts.append(await session.execute("DELETE FROM t WHERE id < ?", (2,)))
            rows = await session.fetch_all("SELECT id, n FROM t ORDER BY id")
        return counts, rows

    counts, rows = asyncio.run(run())
    assert counts == [0, 1, 1, 1, 1, 1, 3, 0, 2]
    assert rows == [(2, 21), (3, 31), (4, 41)]


def test_statements_are_prepared_once_per_connection(postgres_url):
    async def run():
        async with opened(postgres_url, EngineOptions(pool_size=1)) as engine:
            for i in range(3):
                async with engine.read() as session:
                    assert await session.fetch_one("SELECT ?::int * 2", (i,)) == (i * 2,)
            async with engine.read() as session:
                return await session.fetch_all(
                    "SELECT statement FROM pg_prepared_statements WHERE statement LIKE ?", ("%* 2",)
                )

    assert asyncio.run(run()) == [("SELECT $1::int * 2",)]


def test_statement_is_prepared_again_when_its_table_changes_shape(postgres_url):
    async def run():
        async with opened(postgres_url, EngineOptions(pool_size=1)) as engine:
            async with engine.read() as session:
                await session.execute("CREATE TABLE t (id INTEGER NOT NULL)")
                await session.execute("INSERT INTO t VALUES (?)", (1,))
                before = await session.fetch_one("SELECT * FROM t WHERE id = ?", (1,))
                await session.execute("ALTER TABLE t ADD COLUMN label TEXT NOT NULL DEFAULT 'new'")
                after = await session.fetch_one("SELECT * FROM t WHERE id = ?", (1,))
            return before, after

    assert asyncio.run(run()) == ((1,), (1, "new"))


def test_insert_returning_gives_the_generated_id(postgres_url):
    async def run():
        async with opened(postgres_url) as engine:
            await engine.recreate_schema(shop.SCHEMA)
            ids = []
            for customer in (7, 8):
                async with engine.transaction() as session:
                    ids.append(await session.fetch_one(shop.INSERT_ORDER, (customer, 100, 1_700_000_000)))
            async with engine.read() as session:
                stored = await session.fetch_all("SELECT id, customer_id FROM orders ORDER BY id")
        return ids, stored

    ids, stored = asyncio.run(run())
    assert ids == [(1,), (2,)]
    assert stored == [(1, 7), (2, 8)]


def test_transaction_commits_or_rolls_back_and_keeps_the_connection(postgres_url):
    async def run():
        async with opened(postgres_url, EngineOptions(pool_size=1)) as engine:
            async with engine.read() as session:
                await session.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            pid = await backend_pid(engine)
            async with engine.transaction() as session:
                await session.execute("INSERT INTO t VALUES (?)", (1,))
            with pytest.raises(RuntimeError):
                async with engine.transaction() as session:
                    await session.execute("INSERT INTO t VALUES (?)", (2,))
                    raise RuntimeError("application error")
            with pytest.raises(Exception, match="duplicate key"):
                async with engine.transaction() as session:
                    await session.execute("INSERT INTO t VALUES (?)", (3,))
                    await session.execute("INSERT INTO t VALUES (?)", (1,))
            async with engine.read() as session:
                rows = await session.fetch_all("SELECT id FROM t ORDER BY id")
            return pid, await backend_pid(engine), rows

    pid_before, pid_after, rows = asyncio.run(run())
    assert rows == [(1,)]
    assert pid_after == pid_before  # rolled back cleanly: the same connection went back to the pool


def test_a_cancelled_statement_drops_its_connection(postgres_url):
    async def run():
        async with opened(postgres_url, EngineOptions(pool_size=1)) as engine:
            pid = await backend_pid(engine)

            async def slow() -> None:
                async with engine.read() as session:
                    await session.fetch_one("SELECT pg_sleep(?)", (10,))

            with pytest.raises(TimeoutError):
                await asyncio.wait_for(slow(), 0.2)
            return pid, await backend_pid(engine)

    pid_before, pid_after = asyncio.run(run())
    assert pid_after != pid_before


def test_a_closed_port_is_unreachable():
    async def run():
        async with opened("postgresql://postgres@127.0.0.1:1/postgres"):
            pass

    with pytest.raises(ServerUnreachable, match=r"127\.0\.0\.1:1 \(Connection refused\).*server is running"):
        asyncio.run(run())


def test_a_missing_socket_is_unreachable(tmp_path):
    async def run():
        async with opened(f"postgresql:///postgres?host={tmp_path}"):
            pass

    with pytest.raises(ServerUnreachable, match=f"{tmp_path}/.s.PGSQL.5432 .No such file"):
        asyncio.run(run())


def test_a_server_that_does_not_answer_times_out():
    # A listening socket that never accepts: the kernel completes the TCP handshake, then nothing answers.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"postgresql://postgres@127.0.0.1:{listener.getsockname()[1]}/x"

        async def run():
            async with opened(url, EngineOptions(connect_timeout=0.3)):
                pass

        started = time.perf_counter()
        with pytest.raises(ServerUnreachable, match=r"127\.0\.0\.1:\d+ did not answer within 0\.3 s"):
            asyncio.run(run())
        assert time.perf_counter() - started < 2


def test_a_missing_database_says_how_to_create_it(postgres_url):
    name = f"dbladder_missing_{uuid.uuid4().hex[:12]}"
    url = parse_url(postgres_url).with_database(name)

    async def run():
        async with opened(url):
            pass

    with pytest.raises(MissingDatabase, match=f"no database '{name}'.*createdb .*{name}"):
        asyncio.run(run())


def test_a_missing_role_fails_authentication(postgres_url):
    url = postgres_url.replace("postgresql://postgres@", "postgresql://dbladder_no_such_role@", 1)
    assert url != postgres_url

    async def run():
        async with opened(url):
            pass

    with pytest.raises(AuthenticationFailed, match='role "dbladder_no_such_role" does not exist'):
        asyncio.run(run())


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://postgres@127.0.0.1/db?pool=3", "unknown PostgreSQL URL parameter.*pool.*known: host"),
        ("postgresql://postgres@127.0.0.1/db?sslmode=verify-full", "sslmode must be disable or prefer"),
        ("postgresql:///db?host=localhost", "names a Unix socket folder"),
        ("postgresql://postgres@127.0.0.1/db?host=/var/run/postgresql", "both a TCP host and"),
    ],
)
def test_bad_urls_say_what_is_wrong(url, message):
    with pytest.raises(BadURL, match=message):
        create_engine(url)


def test_defaults_are_postgres_on_localhost():
    engine = create_engine("postgresql:///?sslmode=disable")
    endpoint = engine.endpoint  # type: ignore[attr-defined]
    assert (endpoint.user, endpoint.database, endpoint.address) == ("postgres", "postgres", "127.0.0.1:5432")


def test_describe_reports_versions_transport_and_durability(postgres_url):
    async def run():
        async with opened(postgres_url, EngineOptions(pool_size=7)) as engine:
            async with engine.read() as session:
                row = await session.fetch_one(
                    "SELECT current_setting('server_version'), "
                    "current_setting('default_transaction_isolation')"
                )
            assert row is not None
            version, isolation = row
            return await engine.describe(), version, isolation

    info, version, isolation = asyncio.run(run())
    assert info.engine == "postgresql"
    assert info.server_version == version
    assert (info.driver, info.driver_version) == ("asyncpg", asyncpg.__version__)
    assert info.transport == "tcp 127.0.0.1:5432"
    assert info.isolation == isolation
    assert info.pool_size == 7
    assert "prepared once per connection" in info.prepared_statements
    assert set(info.durability) == {"fsync", "synchronous_commit", "wal_level", "full_page_writes"}
    assert set(info.settings) == {"shared_buffers", "max_connections", "effective_cache_size", "max_wal_size"}
    expected_durable = info.durability["fsync"] == "on" and info.durability["synchronous_commit"] != "off"
    assert info.durable is expected_durable
    assert (info.durability_note == "") is expected_durable


def test_a_small_seed_loads_exact_rows_and_moves_the_order_sequence(postgres_url, sqlite_url):
    config = shop.SeedConfig(products=1000, orders=5000)

    async def run():
        async with opened(postgres_url) as engine:
            report = await seed_shop(engine, config)
            counts = await shop.row_counts(engine)
            async with opened(sqlite_url) as reference:
                await seed_shop(reference, config)
                same_rows = await shop.checksum(reference) == await shop.checksum(engine)
            order_id, total = await shop.create_order(engine, 42, [(3, 1), (1, 2)])
            product = await shop.product_by_id(engine, 3)
            order = await shop.order_with_items(engine, order_id)
            exists = [
                await engine.table_exists(name) for name in ("products", "orders", "order_items", "nope")
            ]
            async with engine.read() as session:
                indexes = await session.fetch_all(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname"
                )
        return report, counts, order_id, total, product, order, exists, indexes, same_rows

    report, counts, order_id, total, product, order, exists, indexes, same_rows = asyncio.run(run())
    assert {t.table: t.rows for t in report.tables} == {
        "products": 1000,
        "orders": 5000,
        "order_items": 10000,
    }
    assert counts == {"products": 1000, "orders": 5000, "order_items": 10000}
    assert same_rows  # byte-identical to what SQLite was given
    assert order_id == 5001
    assert product["stock"] == shop.INITIAL_STOCK - 1
    assert total == sum(item["qty"] * item["price_cents"] for item in order["items"])
    assert [(item["product_id"], item["qty"]) for item in order["items"]] == [(1, 2), (3, 1)]
    assert exists == [True, True, True, False]
    assert indexes == [("order_items_pkey",), ("orders_pkey",), ("products_category_id",), ("products_pkey",)]


def test_counters_are_empty(postgres_url):
    engine = create_engine(postgres_url)
    assert engine.counters() == {}
