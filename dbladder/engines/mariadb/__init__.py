"""MariaDB, over TCP or a Unix socket, through asyncmy.

Why asyncmy: it speaks the binary protocol with server-side prepared statements and MariaDB's
COM_STMT_BULK_EXECUTE, and ships wheels. Every statement is prepared on first use on a connection
and reused from then on (seed 001: "Prepare once, on both drivers"); without that each query
would pay extra round trips and the comparison with PostgreSQL would be wrong.

Defaults are seed 001's: READ COMMITTED, set on every connection (`?isolation=repeatable-read`
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

from .loading import MariaDBLoading
from .snapshot import MariaDBSnapshots

__all__ = ["MariaDBEngine"]


class MariaDBEngine(MariaDBLoading, MariaDBSnapshots):
    """MariaDB (and MySQL) through asyncmy: the `Engine` of `dbladder.engines.base`."""
