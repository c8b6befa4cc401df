"""The engine class: its connection, loading and snapshot pieces put together (the package's
notes say what each does)."""

from __future__ import annotations

from .loading import PostgresLoading
from .snapshot import PostgresSnapshots

__all__ = ["PostgresEngine"]


class PostgresEngine(PostgresLoading, PostgresSnapshots):
    """PostgreSQL through asyncpg: the `Engine` of `dbladder.engines.base`."""
