"""PostgreSQL, over the network or a Unix socket, through asyncpg.

    postgresql://user@127.0.0.1:5432/db          TCP
    postgresql:///db?host=/var/run/postgresql    Unix socket: `host` names the socket's folder

The user defaults to `postgres`, the database to `postgres`, the TCP address to 127.0.0.1:5432.
Besides `host`, the URL takes `sslmode=disable` or `sslmode=prefer` (asyncpg's default: TLS when
the server offers it); `describe()` says which the connection got.

Connections come from dbladder's shared pool, not asyncpg's, so every engine queues the same way.
They stay in autocommit; `transaction()` wraps a block in BEGIN ... COMMIT. SQL arrives with `?`
placeholders and is rewritten to `$1, $2 ...` once per text; every statement is prepared once
per connection and kept with it (`_Session` says why our own dict and not asyncpg's cache).
Seeding loads rows with binary COPY and builds the primary keys after the data is in.

A snapshot (fresh data before each run, `dbladder.fresh`) is a database, `<db>_dbladder_snapshot`,
made from this one as a template; a restore drops this one and makes it from the snapshot again.

The engine is three pieces, one module each: `connection` (the URL's endpoint, connections,
sessions, and open/close/read/transaction/describe), `loading` (DDL and COPY) and `snapshot`.
"""

from __future__ import annotations

from ...engine_registry import EngineKind

__all__ = ["KIND"]

KIND = EngineKind(
    name="postgresql",
    label="PostgreSQL",
    in_process=False,
    settings_format="postgresql.conf",
    schemes=("postgresql", "postgres"),
    app_scheme="postgres",
    password_variable="PGPASSWORD",  # and ~/.pgpass, which asyncpg reads itself
    engine_class="dbladder.engines.postgres.engine:PostgresEngine",
    dialect="dbladder.engines.postgres.dialect:DIALECT",
    activity_probe="dbladder.engines.postgres.activity:PostgresActivity",
    storage_reader="dbladder.engines.postgres.storage",
    settings_writer="dbladder.engines.postgres.settings_file:settings_file",
    managed_server="dbladder.servers.postgres:PostgresServer",
)
"""PostgreSQL's registration (`dbladder.engine_registry`), named by dbladder's entry point `postgresql`."""
