"""MariaDB, over TCP or a Unix socket, through asyncmy.

Why asyncmy: it speaks the binary protocol with server-side prepared statements and MariaDB's
COM_STMT_BULK_EXECUTE, and ships wheels. Every statement is prepared on first use on a connection
and reused from then on ("Postgres vs MariaDB on two dedicated CPUs": "Prepare once, on both drivers");
without that each query
would pay extra round trips and the comparison with PostgreSQL would be wrong.

Defaults are those of "Postgres vs MariaDB on two dedicated CPUs": READ COMMITTED, set on every connection
(`?isolation=repeatable-read`
to change), utf8mb4, autocommit outside `transaction()`. UPDATE counts the rows it matched, not
only those it changed (client flag FOUND_ROWS), as SQLite and PostgreSQL count.

    mariadb://root@127.0.0.1:3306/test                                  TCP (mysql:// too)
    mariadb://root@localhost/test?unix_socket=/run/mysqld/mysqld.sock   Unix socket

Loading: prepared INSERT sent by COM_STMT_BULK_EXECUTE, 10,000 rows a batch, each batch
committed on its own (`loading` has the measurements that chose it).

A snapshot (fresh data before each run, `dbladder.fresh`) is a database, `<db>_dbladder_snapshot`,
holding copies of the tables' InnoDB tablespace files; saving and restoring copy those files in
the server's data folder, so both need the server on this machine (else seeding again is used).

The engine is three pieces, one module each: `connection` (settings, connections, sessions, and
open/close/read/transaction/describe), `loading` (DDL and bulk loading) and `snapshot`.
"""

from __future__ import annotations

from ...engine_registry import EngineKind

__all__ = ["KIND"]

KIND = EngineKind(
    name="mariadb",
    label="MariaDB",
    in_process=False,
    settings_format="option file",
    schemes=("mariadb", "mysql"),  # mysql:// as other tools write it
    app_scheme="mysql",
    password_variable="MYSQL_PWD",
    engine_class="dbladder.engines.mariadb.engine:MariaDBEngine",
    dialect="dbladder.engines.mariadb.dialect:DIALECT",
    activity_probe="dbladder.engines.mariadb.activity:MariaDBActivity",
    storage_reader="dbladder.engines.mariadb.storage",
    settings_writer="dbladder.engines.mariadb.settings_file:settings_file",
    managed_server="dbladder.servers.mariadb:MariaDBServer",
    credentials="dbladder.engines.mariadb.credentials:with_password",
)
"""MariaDB's registration (`dbladder.engine_registry`), named by dbladder's entry point `mariadb`."""
