"""Engines: one package per database, all behind the interface in `base`.

`create_engine(url)` makes the engine class the URL's engine registers (`dbladder.engine_registry`:
each engine package's `KIND`, named by an entry point); the class is imported when first asked
for, so that a missing driver only matters to the engine that needs it. Each built-in engine is a
package (`sqlite/`, `postgres/`, `mariadb/`) of three modules: `connection` (settings,
connections, sessions, open/close/read/transaction/describe, check_statements), `loading` (DDL,
bulk loading) and `snapshot` (fresh data before each run); its engine class (`engine.py`) is the
three put together. Its `dialect` module answers what dbladder asks of the engine outside a
session (`dialect.dialect_of(url)`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..engine_registry import load
from ..urls import DatabaseURL, parse_url, with_password
from .base import Engine, EngineInfo, EngineOptions, Session

__all__ = [
    "Engine",
    "EngineInfo",
    "EngineOptions",
    "Session",
    "create_engine",
    "opened",
]


def create_engine(url: str | DatabaseURL, options: EngineOptions | None = None) -> Engine:
    """An unopened engine for a database URL (see `dbladder.urls` for the forms accepted).

    A URL without a password gets the one its engine's own client would use, from this process's
    environment and the user's files (`dbladder.urls.with_password`): every process of a run
    finds it there, so no configuration or command line has to carry it.
    """
    parsed = with_password(parse_url(url) if isinstance(url, str) else url, os.environ)
    engine_class = load(parsed.kind.engine_class)
    engine: Engine = engine_class(parsed, (options or EngineOptions()).checked())
    return engine


@asynccontextmanager
async def opened(url: str | DatabaseURL, options: EngineOptions | None = None) -> AsyncIterator[Engine]:
    """An engine, opened for the block and closed after it."""
    engine = create_engine(url, options)
    await engine.open()
    try:
        yield engine
    finally:
        await engine.close()
