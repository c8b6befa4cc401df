"""The local database servers the tests use, and the statements that set up what a test needs on them.

Kept out of conftest.py so that a test file can import them: `from conftest import ...` resolves to
whichever conftest.py pytest put on sys.path first (tests/servers/ has its own), and fails when
those folders are collected together.
"""

from __future__ import annotations

import os
import uuid

from dbladder.urls import DatabaseURL

POSTGRES_URL = os.environ.get("DBLADDER_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
MARIADB_URL = os.environ.get("DBLADDER_TEST_MARIADB_URL", "mariadb://root@127.0.0.1:3306/test")


def unique_name(prefix: str = "dbladder_test") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


async def postgres_admin(url: DatabaseURL, statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(
        user=url.user, password=url.password, host=url.host, port=url.port, database=url.database, timeout=5
    )
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def mariadb_admin(url: DatabaseURL, statement: str) -> None:
    import asyncmy

    connection = await asyncmy.connect(
        user=url.user or "root",
        password=url.password or "",
        host=url.host or "127.0.0.1",
        port=url.port or 3306,
        connect_timeout=5,
    )
    try:
        async with connection.cursor() as cursor:
            await cursor.execute(statement)
    finally:
        # QUIT politely: a dropped socket is logged by the server as an aborted connection.
        await connection.ensure_closed()
