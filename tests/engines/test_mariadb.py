"""The MariaDB engine against the local server: URLs, row counts, isolation, errors, loading."""

from __future__ import annotations

import asyncio
import os
import socket
from importlib.metadata import version

import pytest

from dbladder.data.seeding import checksum, row_counts, seed
from dbladder.engines import Engine, EngineOptions, create_engine, opened
from dbladder.engines.base import Row
from dbladder.errors import (
    AuthenticationFailed,
    BadURL,
    DatabaseTimeout,
    MissingDatabase,
    ServerUnreachable,
)
from dbladder.urls import parse_url
from dbladder.workloads import shop
from dbladder.workloads.base import DataSpec
from dbladder.workloads.shop import OutOfStock, UnknownProduct, schema

SOCKET = os.environ.get("DBLADDER_TEST_MARIADB_SOCKET", "/run/mysqld/mysqld.sock")
SMALL = shop.dataset(products=1000, orders=5000)


def socket_url(mariadb_url: str, scheme: str = "mariadb") -> str:
    url = parse_url(mariadb_url)
    if not os.path.exists(SOCKET):
        pytest.skip(f"no MariaDB socket at {SOCKET} (set DBLADDER_TEST_MARIADB_SOCKET)")
    return f"{scheme}://{url.user or 'root'}@localhost/{url.database}?unix_socket={SOCKET}"


async def _seeded(url: str, config: DataSpec = SMALL, **options) -> None:
    async with opened(url, EngineOptions(**options)) as engine:
        await seed(engine, shop.workload, config)


async def _connection_id(engine: Engine) -> Row | None:
    async with engine.read() as session:
        return await session.fetch_one("SELECT CONNECTION_ID()")


def _connect_error(url: str, **options) -> Exception:
    async def attempt() -> None:
        engine = create_engine(url, EngineOptions(**options))
        try:
            await engine.open()
        finally:
            await engine.close()

    with pytest.raises(Exception) as caught:
        asyncio.run(attempt())
    return caught.value


# ---------------------------------------------------------------------------------------------
# URLs and transports


def test_tcp_and_unix_socket_urls_reach_the_same_database(mariadb_url):
    unix_url = socket_url(mariadb_url)

    async def run() -> list[tuple[str, str, str]]:
        seen = []
        for url in (mariadb_url, unix_url):
            async with opened(url) as engine:
                info = await engine.describe()
                async with engine.read() as session:
                    (database,) = await session.fetch_all("SELECT DATABASE()")
                seen.append((info.transport, database[0], engine.name))
        return seen

    database = parse_url(mariadb_url).database
    assert asyncio.run(run()) == [
        ("tcp 127.0.0.1:3306", database, "mariadb"),
        (f"unix socket {SOCKET}", database, "mariadb"),
    ]


def test_mysql_scheme_is_the_same_engine(mariadb_url):
    url = mariadb_url.replace("mariadb://", "mysql://", 1)

    async def run() -> tuple[str, Row | None]:
        async with opened(url) as engine, engine.read() as session:
            return engine.name, await session.fetch_one("SELECT 6 * 7")

    assert asyncio.run(run()) == ("mariadb", (42,))


def test_unknown_and_bad_url_settings_are_named():
    with pytest.raises(BadURL) as caught:
        create_engine("mariadb://root@127.0.0.1:3306/test?isolation=bogus&pool=3")
    message = str(caught.value)
    assert "unknown MariaDB setting(s) pool" in message
    assert "known: isolation, unix_socket" in message
    assert "isolation must be one of read-committed, repeatable-read" in message
    with pytest.raises(BadURL, match="must name a database"):
        create_engine("mariadb://root@127.0.0.1:3306")


# ---------------------------------------------------------------------------------------------
# Statements


def test_execute_counts_matched_rows_not_only_changed_ones(mariadb_url):
    async def run() -> list[int]:
        async with opened(mariadb_url) as engine, engine.read() as session:
            await session.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)")
            inserted = await session.execute("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
            unchanged = await session.execute("UPDATE t SET v = v WHERE id <= ?", (2,))
            changed = await session.execute("UPDATE t SET v = v + 1 WHERE id >= ?", (2,))
            none = await session.execute("UPDATE t SET v = 0 WHERE id = ?", (99,))
            deleted = await session.execute("DELETE FROM t WHERE id = ?", (1,))
        return [inserted, unchanged, changed, none, deleted]

    assert asyncio.run(run()) == [3, 2, 2, 0, 1]


def test_conditional_stock_update_reports_one_or_zero(mariadb_url):
    async def run() -> tuple[list[int], Row | None]:
        async with opened(mariadb_url) as engine:
            await seed(engine, shop.workload, SMALL)
            async with engine.transaction() as session:
                counts = [
                    await session.execute(schema.TAKE_STOCK, (5, 1, 5)),  # enough stock
                    await session.execute(schema.TAKE_STOCK, (0, 1, 0)),  # matched, value unchanged
                    await session.execute(schema.TAKE_STOCK, (10**7, 1, 10**7)),  # not enough
                    await session.execute(schema.TAKE_STOCK, (1, 10**6, 1)),  # no such product
                ]
            async with engine.read() as session:
                stock = await session.fetch_one("SELECT stock FROM products WHERE id = ?", (1,))
        return counts, stock

    counts, stock = asyncio.run(run())
    assert counts == [1, 1, 0, 0]
    assert stock == (shop.INITIAL_STOCK - 5,)


def test_insert_returning_gives_each_new_id(mariadb_url):
    async def run() -> list:
        async with opened(mariadb_url) as engine:
            await engine.recreate_schema(shop.SCHEMA)
            async with engine.transaction() as session:
                first = await session.fetch_one(schema.INSERT_ORDER, (7, 100, 1))
                second = await session.fetch_one(schema.INSERT_ORDER, (8, 200, 2))
            async with engine.read() as session:
                rows = await session.fetch_all("SELECT id, customer_id FROM orders ORDER BY id")
        return [first, second, rows]

    assert asyncio.run(run()) == [(1,), (2,), [(1, 7), (2, 8)]]


def test_each_statement_is_prepared_once_per_connection(mariadb_url):
    status = "SHOW SESSION STATUS WHERE Variable_name IN ('Com_stmt_prepare', 'Com_stmt_execute')"

    async def run() -> tuple[dict[str, str], dict[str, str]]:
        async with opened(mariadb_url, EngineOptions(pool_size=1)) as engine:
            async with engine.read() as session:
                before = {str(k): str(v) for k, v in await session.fetch_all(status)}
            for number in range(5):
                async with engine.read() as session:
                    assert await session.fetch_one("SELECT ? + 1", (number,)) == (number + 1,)
            async with engine.read() as session:
                after = {str(k): str(v) for k, v in await session.fetch_all(status)}
        return before, after

    before, after = asyncio.run(run())
    # One prepare for the SELECT (the status query was prepared before `before` was read); six
    # executes: five SELECTs and the status query itself.
    assert int(after["Com_stmt_prepare"]) - int(before["Com_stmt_prepare"]) == 1
    assert int(after["Com_stmt_execute"]) - int(before["Com_stmt_execute"]) == 6


# ---------------------------------------------------------------------------------------------
# Transactions and the pool


def test_a_failed_order_rolls_back_and_the_connection_is_reused(mariadb_url):
    async def run() -> tuple[Row | None, dict[str, int], Row | None, Row | None]:
        async with opened(mariadb_url, EngineOptions(pool_size=1)) as engine:
            await seed(engine, shop.workload, SMALL)
            first = await _connection_id(engine)
            with pytest.raises(OutOfStock):
                await shop.create_order(engine, 1, [(1, 1), (2, shop.INITIAL_STOCK + 1)])
            with pytest.raises(UnknownProduct):
                await shop.create_order(engine, 1, [(1, 1), (10**6, 1)])
            with pytest.raises(Exception, match="syntax"):
                async with engine.read() as session:
                    await session.execute("SELEC 1")
            async with engine.read() as session:
                stock = await session.fetch_one("SELECT stock FROM products WHERE id = ?", (1,))
            return first, await row_counts(engine, shop.SCHEMA), stock, await _connection_id(engine)

    first, counts, stock, last = asyncio.run(run())
    assert stock == (shop.INITIAL_STOCK,)
    assert counts == shop.workload.planned_rows(SMALL.sizes)
    assert last == first  # the pool's one connection, kept through every failure


def test_a_cancelled_statement_closes_its_connection(mariadb_url):
    async def run() -> tuple[Row | None, Row | None, Row | None]:
        async with opened(mariadb_url, EngineOptions(pool_size=1)) as engine:
            first = await _connection_id(engine)

            async def slow() -> None:
                async with engine.transaction() as session:
                    await session.fetch_one("SELECT SLEEP(5)")

            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await slow()
            # The next request gets a fresh connection that is in step with the server.
            async with engine.read() as session:
                row = await session.fetch_one("SELECT 41 + 1")
            return first, await _connection_id(engine), row

    first, after, row = asyncio.run(run())
    assert after != first
    assert row == (42,)


@pytest.mark.slow
def test_a_lock_wait_timeout_is_a_database_timeout_and_rolls_back(mariadb_url):
    async def run() -> tuple[Row | None, Row | None]:
        async with opened(mariadb_url, EngineOptions(pool_size=2)) as engine:
            await seed(engine, shop.workload, SMALL)
            async with engine.transaction() as holder:
                await holder.execute(schema.TAKE_STOCK, (1, 2, 1))  # holds product 2's row lock
                with pytest.raises(DatabaseTimeout, match="innodb_lock_wait_timeout"):
                    async with engine.transaction() as waiter:
                        await waiter.execute("SET SESSION innodb_lock_wait_timeout = 1")
                        await waiter.execute(schema.TAKE_STOCK, (1, 1, 1))  # done, then rolled back
                        await waiter.execute(schema.TAKE_STOCK, (1, 2, 1))  # waits for the lock
            async with engine.read() as session:
                first = await session.fetch_one("SELECT stock FROM products WHERE id = ?", (1,))
                second = await session.fetch_one("SELECT stock FROM products WHERE id = ?", (2,))
        return first, second

    assert asyncio.run(run()) == ((shop.INITIAL_STOCK,), (shop.INITIAL_STOCK - 1,))


# ---------------------------------------------------------------------------------------------
# Isolation


def _isolation(url: str) -> tuple[str, Row | None]:
    async def run() -> tuple[str, Row | None]:
        async with opened(url) as engine:
            info = await engine.describe()
            async with engine.transaction() as session:
                row = await session.fetch_one("SELECT @@session.tx_isolation")
        return info.isolation, row

    return asyncio.run(run())


def test_isolation_is_read_committed_by_default(mariadb_url):
    assert _isolation(mariadb_url) == ("read-committed", ("READ-COMMITTED",))


def test_isolation_can_be_set_in_the_url(mariadb_url):
    assert _isolation(mariadb_url + "?isolation=repeatable-read") == ("repeatable-read", ("REPEATABLE-READ",))


# ---------------------------------------------------------------------------------------------
# Connection errors: each a DbladderError with one line to act on


def test_a_closed_port_is_unreachable():
    error = _connect_error("mariadb://root@127.0.0.1:1/test")
    assert isinstance(error, ServerUnreachable)
    assert (
        str(error)
        == "MariaDB at tcp 127.0.0.1:1 refused the connection; is the server running and listening there?"
    )


def test_a_missing_socket_file_is_unreachable(tmp_path):
    error = _connect_error(f"mariadb://root@localhost/test?unix_socket={tmp_path}/none.sock")
    assert isinstance(error, ServerUnreachable)
    assert f"no socket file {tmp_path}/none.sock" in str(error)


def test_a_server_that_never_answers_times_out():
    # A socket that listens and never accepts: the kernel completes the TCP handshake, as for a
    # hung server, and no greeting ever comes.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        error = _connect_error(f"mariadb://root@127.0.0.1:{port}/test", connect_timeout=0.3)
    assert isinstance(error, ServerUnreachable)
    assert str(error) == (
        f"MariaDB at tcp 127.0.0.1:{port} did not answer within 0.3 s (connect_timeout); "
        "is the server up and reachable?"
    )


def test_a_missing_database_says_how_to_create_it(mariadb_url):
    name = f"{parse_url(mariadb_url).database}_missing"
    error = _connect_error(parse_url(mariadb_url).with_database(name).raw)
    assert isinstance(error, MissingDatabase)
    assert str(error).endswith(f"create it with: mariadb -e 'CREATE DATABASE `{name}`'")


def test_a_wrong_password_is_refused(mariadb_url):
    url = parse_url(mariadb_url)
    error = _connect_error(
        f"mariadb://{url.user or 'root'}:wrong-password@{url.host}:{url.port}/{url.database}"
    )
    assert isinstance(error, AuthenticationFailed)
    assert "Access denied" in str(error)
    assert "wrong-password" not in str(error)


def test_a_missing_user_is_refused(mariadb_url):
    url = parse_url(mariadb_url)
    error = _connect_error(f"mariadb://no_such_dbladder_user@{url.host}:{url.port}/{url.database}")
    assert isinstance(error, AuthenticationFailed)
    assert "refused user 'no_such_dbladder_user'" in str(error)


# ---------------------------------------------------------------------------------------------
# describe


def test_describe_reports_versions_transport_and_durability(mariadb_url):
    async def run():
        async with opened(mariadb_url, EngineOptions(pool_size=7)) as engine:
            info = await engine.describe()
            async with engine.read() as session:
                version_row = await session.fetch_one("SELECT VERSION()")
        return info, version_row

    info, version_row = asyncio.run(run())
    assert info.engine == "mariadb"
    assert info.url == mariadb_url
    assert info.server_version == version_row[0] and "MariaDB" in info.server_version
    assert (info.driver, info.driver_version) == ("asyncmy", version("asyncmy"))
    assert info.transport == "tcp 127.0.0.1:3306"
    assert info.pool_size == 7
    assert "prepared once per connection" in info.prepared_statements
    assert set(info.durability) == {
        "innodb_flush_log_at_trx_commit",
        "sync_binlog",
        "log_bin",
        "innodb_doublewrite",
    }
    assert set(info.settings) == {"innodb_buffer_pool_size", "innodb_log_file_size", "max_connections"}
    assert all(value.isdigit() for value in info.settings.values())
    durability = info.durability
    expected = durability["innodb_flush_log_at_trx_commit"] == "1" and (
        durability["log_bin"] == "OFF" or durability["sync_binlog"] == "1"
    )
    assert info.durable == expected
    assert (info.durability_note == "") == expected


# ---------------------------------------------------------------------------------------------
# Loading


def test_a_small_seed_loads_exact_counts_and_ids_continue(mariadb_url):
    async def run():
        async with opened(mariadb_url) as engine:
            report = await seed(engine, shop.workload, SMALL)
            counts = await row_counts(engine, shop.SCHEMA)
            order_id, _ = await shop.create_order(engine, 42, [(3, 1), (1, 2)])
            order = await shop.order_with_items(engine, order_id)
            async with engine.read() as session:
                index = await session.fetch_all(
                    "SELECT column_name FROM information_schema.statistics WHERE table_schema = DATABASE() "
                    "AND index_name = ? ORDER BY seq_in_index",
                    ("products_category_id",),
                )
            exists = (await engine.table_exists("order_items"), await engine.table_exists("nothing"))
        return report, counts, order_id, order, index, exists

    report, counts, order_id, order, index, exists = asyncio.run(run())
    assert {load.table: load.rows for load in report.tables} == shop.workload.planned_rows(SMALL.sizes)
    assert counts == {"products": 1000, "orders": 5000, "order_items": 10_000}
    assert order_id == 5001
    assert [item["product_id"] for item in order["items"]] == [1, 3]
    assert index == [("category",), ("id",)]
    assert exists == (True, False)


def test_seeded_rows_are_identical_to_sqlite(mariadb_url, sqlite_url):
    async def digest(url: str) -> dict[str, str]:
        async with opened(url) as engine:
            await seed(engine, shop.workload, SMALL)
            return await checksum(engine, shop.SCHEMA)

    async def run() -> tuple[dict[str, str], dict[str, str]]:
        return await digest(mariadb_url), await digest(sqlite_url)

    on_mariadb, on_sqlite = asyncio.run(run())
    assert on_mariadb == on_sqlite
