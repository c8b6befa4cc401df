"""SQLite, in-process, through apsw.

Why apsw: its wheel bundles a current SQLite (3.54 here, against 3.40 in this machine's stdlib
module) and it is faster for point reads (docs/design.md has the figures). Every result records
the library version actually linked.

Defaults are seed 000's connection string: journal_mode=WAL, synchronous=FULL, busy_timeout=5000,
cache_size=-10240; each can be set in the URL (`sqlite:///shop.db?synchronous=NORMAL`).

SQLite calls run inline on the caller's thread: a query is a function call, and a thread hop per
query would cost more than most queries. Writes take the file lock at BEGIN IMMEDIATE. Waiting
for that lock goes through a busy handler that does what busy_timeout does (SQLite's own backoff:
1, 2, 5, 10 ... 100 ms up to the timeout) and counts every sleep, so a run can show how often the
service slept on the lock (seed 000: "Sleeping on the lock").

A snapshot (fresh data before each run, `dbladder.fresh`) is a sibling file,
`<file>.dbladder_snapshot`, saved with SQLite's backup API and put back by a file copy.

The engine is three pieces, one module each: `connection` (settings, connections, sessions, and
open/close/read/transaction/describe), `loading` (DDL and bulk loading) and `snapshot`.
"""

from __future__ import annotations

from .loading import SQLiteLoading
from .snapshot import SQLiteSnapshots

__all__ = ["SQLiteEngine"]


class SQLiteEngine(SQLiteLoading, SQLiteSnapshots):
    """SQLite in-process through apsw: the `Engine` of `dbladder.engines.base`."""
