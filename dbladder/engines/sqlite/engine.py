"""The engine class: its connection, loading and snapshot pieces put together (the package's
notes say what each does)."""

from __future__ import annotations

from .loading import SQLiteLoading
from .snapshot import SQLiteSnapshots

__all__ = ["SQLiteEngine"]


class SQLiteEngine(SQLiteLoading, SQLiteSnapshots):
    """SQLite in-process through apsw: the `Engine` of `dbladder.engines.base`."""
