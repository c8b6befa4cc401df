"""The Node Chirp app (examples/node_chirp/), a real Node app on better-sqlite3, pg and mysql2,
under `dbladder run --app` on every engine.

Its answers have a known right value: it sends the SQL of dbladder's own chirp workload
(checked here statement for statement), so every page it serves must be, field for field, what
dbladder's chirp operations read from the same database. The ladder's figures have a known answer
too: 15 and 30 req/s for 2 s each are far below what the app serves on this 2-core machine (its
searches held over 1,000 req/s on SQLite and over 300 on the servers at a p95 under 50 ms, the
machine busy: docs/app.md), so every request due is sent and
answered with its success status, none fails, every new post is acknowledged with its id and
found afterwards, and the database holds the seeded posts plus exactly those.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from cli_support import dbladder as run_dbladder
from cli_support import dbladder_here
from node_support import NODE_CHIRP, app_copy, installed_modules, processes_in, tool

from dbladder.app import AppCommand, app_environment, running_app
from dbladder.engines import opened
from dbladder.urls import DatabaseURL, parse_url, resolve_url
from dbladder.workloads.chirp import operations
from dbladder.workloads.chirp.data import handle_of

USERS, POSTS = 300, 2000
SIZES = f"--size users={USERS} --size posts={POSTS}"
SEED = f'{sys.executable} -m dbladder seed --workload chirp --db "$DATABASE_URL" {SIZES}'
# Two processes on the one port (node:cluster): the run must find and stop the whole tree.
SERVE = "WORKERS=2 node server.js"
# Cold, as the ladder's figures were taken: the warm-up's posts would be the app's, unacknowledged.
LADDER = ["--start", "15", "--step", "15", "--steps", "2", "--hold", "2", "--warmup", "0", "--no-app-warmup"]
# Lenient: the figures asserted are counts and statuses, which a busy machine does not change.
LENIENT = ["--p95", "2000", "--max-fail", "100", "--continue-after-fail"]

dbladder = partial(run_dbladder, timeout=180)


@pytest.fixture(scope="session")
def node_modules() -> Path:
    return installed_modules()


@pytest.fixture
def app_folder(tmp_path, node_modules) -> Path:
    return app_copy(tmp_path / "node_chirp", node_modules)


def get(port: int, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """The app's status and JSON answer for one request (a POST when `body` is given)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def read_pages(url: DatabaseURL, post_ids: list[int], user_ids: list[int]) -> dict[str, Any]:
    """What dbladder's own chirp operations read for these rows: the app's right answers."""
    async with opened(url) as engine:
        pages: dict[str, Any] = {}
        for post_id in post_ids:
            pages[f"/post/{post_id}"] = await operations.post_by_id(engine, post_id)
        for user_id in user_ids:
            pages[f"/u/{handle_of(user_id)}"] = await operations.profile(engine, handle_of(user_id))
            pages[f"/timeline/{user_id}"] = await operations.timeline(engine, user_id)
        return pages


def assert_pages_right(port: int, url: DatabaseURL, post_ids: list[int], user_ids: list[int]) -> None:
    right = asyncio.run(read_pages(url, post_ids, user_ids))
    for path, page in right.items():
        assert page, f"{path}: the known row is not in the seeded data"
        assert get(port, path) == (200, page), path


def test_the_app_sends_the_sql_of_dbladders_chirp_workload():
    node = tool("node")
    script = "import('./queries.js').then((m) => console.log(JSON.stringify(m.SQL)))"
    printed = subprocess.run(
        [node, "-e", script], cwd=NODE_CHIRP, capture_output=True, text=True, timeout=30, check=True
    ).stdout
    names = ("POST_BY_ID", "USER_BY_HANDLE", "USER_POSTS", "TIMELINE", "USER_EXISTS", "INSERT_POST")
    assert json.loads(printed) == {name: getattr(operations, name) for name in names}


def test_the_app_answers_known_rows_of_a_tiny_sqlite_file_as_dbladders_chirp_does(app_folder, tmp_path):
    url = parse_url(f"sqlite:///{tmp_path / 'chirp.db'}")
    seeded = dbladder_here(
        "seed", "--workload", "chirp", "--db", url.raw, "--size", "users=40", "--size", "posts=150"
    )
    assert seeded.returncode == 0, seeded.stderr
    environment = app_environment(url)
    with running_app(AppCommand("node server.js", app_folder), environment, tmp_path / "app.log") as app:
        assert get(app.port, "/") == (200, {"app": "chirp", "engine": "sqlite"})
        assert_pages_right(app.port, url, [1, 7, 150], [3, 40])
        status, made = get(app.port, "/post", {"user_id": 3, "body": "a post from the test"})
        assert status == 201 and made["id"] == 151 and made["user_id"] == 3, made
        written = asyncio.run(read_pages(url, [151], []))["/post/151"]
        assert written == {"id": 151, "user_id": 3, "handle": handle_of(3), "body": "a post from the test",
                           "created_at": made["created_at"], "likes": 0}  # fmt: skip
        assert get(app.port, "/post/151") == (200, written)
        assert get(app.port, "/post/9999") == (404, {"error": "no post with id 9999"})
        assert get(app.port, "/u/nobody") == (404, {"error": 'no user with handle "nobody"'})
        assert get(app.port, "/post/x")[0] == 400
        unknown = {"user_id": 999, "body": "hi"}
        assert get(app.port, "/post", unknown) == (404, {"error": "no user with id 999"})
        assert get(app.port, "/post", {"user_id": 3, "body": ""})[0] == 400
    assert not app.members()


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def app_url(request, tmp_path) -> tuple[str, str]:
    """A fresh database on each engine, with a password where the server checks one: (url, password)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/chirp.db", ""
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url"), ""
    user, password, database = request.getfixturevalue("mariadb_user")  # mysql2 gets it from MYSQL_PWD
    return f"mariadb://{user}:{password}@127.0.0.1:3306/{database}", password


@pytest.mark.slow
def test_a_ladder_on_each_engine_answers_all_and_keeps_every_new_post(app_url, app_folder, tmp_path):
    raw, password = app_url
    url = resolve_url(raw)
    out = tmp_path / "out"
    ran = dbladder(
        "run", "--db", raw, "--app", SERVE, "--app-setup", SEED, "--app-dir", str(app_folder),
        "--requests", str(app_folder / "dbladder_requests.py"), *LADDER, *LENIENT,
        "--writes", "0.2", "--out", str(out),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert not processes_in(app_folder)  # the shell, the cluster's primary and its two workers
    result = json.loads((out / "result.json").read_text())
    levels = result["levels"]
    assert [level["requests"] for level in levels] == [30, 60]  # 15 and 30 req/s for 2 s, on the schedule
    for level in levels:
        assert level["fail_pct"] == 0 and level["failures"] == {}, level["failures"]
        operations_seen = level["operations"]
        assert set(operations_seen) == {"timeline", "post", "profile", "new_post"}
        assert sum(op["requests"] for op in operations_seen.values()) == level["requests"]
        assert level["machine"]["service_processes"] >= 3
    assert result["app"]["failures"] == []
    written = sum(level["operations"]["new_post"]["requests"] for level in levels)
    integrity = result["integrity"]
    # At least the levels' writes: a post sent before the levels (an app warm-up) is acknowledged too.
    assert integrity["acknowledged"] == integrity["present"] >= written > 0
    assert (integrity["lost"], integrity["invariants"]) == (0, {"posts by no user": 0})

    async def posts() -> list[int]:
        async with opened(url) as engine, engine.read() as session:
            return [row[0] for row in await session.fetch_all("SELECT id FROM posts ORDER BY id")]

    ids = asyncio.run(posts())
    assert len(ids) == POSTS + integrity["acknowledged"]  # every acknowledged post, and nothing else
    # The same app again on what the run left: known rows and a post the run wrote, as dbladder reads them.
    environment = app_environment(url)
    with running_app(AppCommand("node server.js", app_folder), environment, tmp_path / "again.log") as app:
        assert_pages_right(app.port, url, [1, 7, POSTS, ids[-1]], [3, USERS])
    log = (out / "app.log").read_text()
    assert "listening on 127.0.0.1:" in log
    if password:
        assert password not in log and password not in (out / "result.json").read_text()
