"""SQLite, in-process, through apsw.

Why apsw: its wheel bundles a current SQLite (3.54 here, against 3.40 in this machine's stdlib
module) and it is faster for point reads (docs/design.md has the figures). Every result records
the library version actually linked.

Defaults are the connection string of "Postgres vs SQLite under load": journal_mode=WAL, synchronous=FULL,
busy_timeout=5000,
cache_size=-10240; each can be set in the URL (`sqlite:///shop.db?synchronous=NORMAL`).

SQLite calls run inline on the caller's thread: a query is a function call, and a thread hop per
query would cost more than most queries. Writes take the file lock at BEGIN IMMEDIATE. Waiting
for that lock goes through a busy handler that does what busy_timeout does (SQLite's own backoff:
1, 2, 5, 10 ... 100 ms up to the timeout) and counts every sleep, so a run can show how often the
service slept on the lock ("Postgres vs SQLite under load": "Sleeping on the lock").

A snapshot (fresh data before each run, `dbladder.fresh`) is a sibling file,
`<file>.dbladder_snapshot`, saved with SQLite's backup API and put back by a file copy.

The engine is three pieces, one module each: `connection` (settings, connections, sessions, and
open/close/read/transaction/describe), `loading` (DDL and bulk loading) and `snapshot`.
"""

from __future__ import annotations

from ...engine_registry import EngineKind, RunSetting

__all__ = ["KIND", "WRITERS"]

WRITERS = RunSetting(
    key="sqlite_writers",
    option="--sqlite-writers",
    help="SQLite only: 1 sends every write of every worker through one connection in one writer process.",
    choices=(0, 1),
    wording=("every connection writes", "one connection takes every write"),
    fact="SQLite writers",
    run_label=", one writer",
    writer_processes=True,
)
"""SQLite lets one connection write at a time: 0, every pooled connection of every worker may write
and waits on the file lock; 1, the service's one writer process takes every write
(`dbladder.service.writer`, "Postgres vs SQLite under load")."""

KIND = EngineKind(
    name="sqlite",
    label="SQLite",
    in_process=True,
    settings_format="pragmas",
    schemes=("sqlite",),
    app_scheme="sqlite",
    engine_class="dbladder.engines.sqlite.engine:SQLiteEngine",
    dialect="dbladder.engines.sqlite.dialect:DIALECT",
    activity_probe="dbladder.engines.sqlite.activity:SQLiteActivity",
    storage_reader="dbladder.engines.sqlite.storage",
    settings_writer="dbladder.engines.sqlite.settings_file:settings_file",
    run_settings=(WRITERS,),
)
"""SQLite's registration (`dbladder.engine_registry`), named by dbladder's entry point `sqlite`."""
