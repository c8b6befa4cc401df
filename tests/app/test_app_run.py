"""`dbladder run --app ...`: the user's app started on the run's database, its request file sent
through the load's open model, its writes checked, and each way it can misbehave as one line.

The app is tests/app/login_app.py, a small real web app (a login with a CSRF cookie, a form POST
that writes a row of a real SQLite file and redirects to it). At 20 req/s for 2 s it answers every
request well within a second, so the figures have a known answer: 40 requests due per level, all
answered, every write acknowledged and found, and the file's rows are its 2 seeded ones plus them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import sys
import textwrap
from functools import partial
from pathlib import Path

import pytest
from cli_support import dbladder as run_dbladder
from cli_support import dbladder_here

from dbladder.engines import opened
from dbladder.urls import parse_url

HERE = Path(__file__).resolve().parent
SERVE = f"{sys.executable} {HERE / 'login_app.py'} {{port}}"
SETUP = f"{sys.executable} {HERE / 'login_app.py'} setup"

REQUESTS = textwrap.dedent(
    r"""
    from dbladder.app.requests import Acknowledge, Csrf, Invariant, Login, Param, Request, Requests

    requests = Requests(
        login=Login("/login", form={"username": "u{session}", "password": "PASSWORD"},
                    csrf=Csrf.cookie("csrftoken"), success=(302,)),
        sessions=2,
        requests=[
            Request("home", "GET", "/", weight=40),
            Request("item", "GET", "/items/{id}/", weight=20,
                    params={"id": Param.rows("SELECT id FROM items")}),
            Request("add", "POST", "/items", weight=40, success=(302,), form={"title": "{title}"},
                    params={"title": Param.text(1, 3)},
                    acknowledge=Acknowledge.location(r"/items/(\d+)/"),
                    find="SELECT count(*) FROM items WHERE id = ?"),
        ],
        invariants=[Invariant("untitled items", "SELECT id FROM items WHERE title = ''")],
    )
    """
)

# Two levels at 20 req/s, 2 s each, judged leniently: a busy machine must not fail them.
LADDER = ["--start", "20", "--step", "0", "--steps", "2", "--hold", "2", "--warmup", "0"]
LENIENT = ["--p95", "5000", "--max-fail", "100", "--continue-after-fail"]

dbladder = partial(run_dbladder, timeout=120)


def request_file(tmp_path: Path, password: str = "pw", text: str = REQUESTS) -> Path:
    path = tmp_path / "app_requests.py"
    path.write_text(text.replace("PASSWORD", password))
    return path


def app_run(tmp_path: Path, *extra: str, serve: str = SERVE, requests: Path | None = None) -> tuple:
    out = tmp_path / "out"
    db = tmp_path / "items.db"
    ran = dbladder(
        "run", "--db", f"sqlite:///{db}", "--app", serve, "--app-setup", SETUP, "--app-ready", "/login",
        "--app-dir", str(tmp_path), "--requests", str(requests or request_file(tmp_path)),
        "--out", str(out), *extra,
    )  # fmt: skip
    return ran, out, db


def _pythons(app_dir: Path) -> list[int]:
    """The live login_app.py processes started in `app_dir` (the test's own --app-dir): another
    test running in parallel has apps of its own, in its own folder."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if "login_app.py" in (entry / "cmdline").read_text() and Path(
                    os.readlink(entry / "cwd")
                ).is_relative_to(app_dir):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.mark.slow
def test_the_app_runs_on_the_runs_database_and_keeps_every_acknowledged_write(tmp_path):
    ran, out, db = app_run(tmp_path, *LADDER, *LENIENT)
    assert ran.returncode == 0, ran.stderr
    result = json.loads((out / "result.json").read_text())
    levels = result["levels"]
    assert [level["requests"] for level in levels] == [40, 40]  # 20 req/s for 2 s, on the schedule
    assert all(level["fail_pct"] == 0 for level in levels)
    by_request = [level["operations"] for level in levels]
    assert all(set(ops) == {"home", "item", "add"} for ops in by_request)
    assert all(sum(op["requests"] for op in ops.values()) == 40 for ops in by_request)
    writes = sum(ops["add"]["requests"] for ops in by_request)
    integrity = result["integrity"]
    assert (integrity["acknowledged"], integrity["present"], integrity["lost"]) == (writes, writes, 0)
    assert integrity["invariants"] == {"untitled items": 0}
    # The warm-up sent every request before the first level, its writes the app's to keep.
    warm = {row["request"]: row for row in result["warmup"]["by_request"]}
    assert set(warm) == {"home", "item", "add"} and result["warmup"]["first_hits"] == 1 + 2 + 1
    assert all(row["failed"] == 0 and row["first_ms"] > 0 for row in warm.values())
    with sqlite3.connect(db) as connection:  # the 2 rows of the setup, the warm-up's and every write answered
        assert (
            connection.execute("SELECT count(*) FROM items").fetchone()[0]
            == 2 + warm["add"]["answers"] + writes
        )
    machine = levels[0]["machine"]
    assert machine["service_processes"] >= 2  # the shell and the app's python: its process tree
    assert machine["service_cpu_pct"] > 0 and machine["service_cpu_ms_per_1k"] > 0
    assert result["app"]["failures"] == [] and result["app"]["setup_s"] > 0
    assert result["config"]["app"]["command"] == SERVE and result["service"]["sessions"] == 2
    assert "integrity: " in ran.stdout and f"{writes} acknowledged, {writes} present, 0 lost" in ran.stdout
    assert (out / "app.log").is_file()
    assert not _pythons(tmp_path)


@pytest.mark.slow
def test_an_app_that_never_answers_fails_in_one_line_within_its_timeout_and_leaves_nothing(tmp_path):
    # The test's folder rides on the app's command line (python -c ignores it): the process looked
    # for afterwards is this test's, not another's sleeping in a parallel worker (test_process.py).
    program = 'import time; print("warming up", flush=True); time.sleep(600)'
    silent = f"{sys.executable} -c '{program}' {tmp_path}"
    ran, _, _ = app_run(tmp_path, *LADDER, "--app-ready-timeout", "1.5", serve=silent)
    assert ran.returncode == 1, ran.stderr
    error = ran.stderr.strip().splitlines()[-1]
    assert error.startswith("Error: the app did not answer /login below 500 within 1.")
    assert f"nothing answered; command: {silent}" in error and error.endswith("its last lines: warming up")
    assert "Traceback" not in ran.stderr
    assert not [pid for pid in _all_pids() if f"time.sleep(600) {tmp_path}" in _cmdline(pid)]


def _all_pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.slow
def test_a_setup_that_fails_says_its_code_and_last_lines_and_loads_nothing(tmp_path):
    out = tmp_path / "out"
    ran = dbladder(
        "run", "--db", f"sqlite:///{tmp_path / 'items.db'}", "--app", SERVE, "--app-dir", str(tmp_path),
        "--app-setup", "echo migrating; echo 'no such table: items' >&2; exit 3",
        "--requests", str(request_file(tmp_path)), "--out", str(out), *LADDER,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr
    assert ran.stderr.strip().splitlines()[-1] == (
        "Error: the app's setup exited with code 3 (command: echo migrating; echo 'no such table: items' "
        ">&2; exit 3); its last lines: migrating | no such table: items; nothing was loaded"
    )
    assert json.loads((out / "result.json").read_text())["levels"] == []


def test_a_bad_request_file_is_one_line_per_problem_before_anything_starts(tmp_path):
    bad = request_file(tmp_path, text=REQUESTS.replace('"/items/{id}/"', '"/items/{item}/"'))
    ran = dbladder_here(
        "run", "--db", f"sqlite:///{tmp_path / 'items.db'}", "--app", SERVE, "--requests", str(bad),
        "--out", str(tmp_path / "bad"),
    )  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    assert f"{bad}: the request 'item': {{item}} is not one of its params" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (tmp_path / "bad").exists() and not (tmp_path / "items.db").exists()


# The example app, stopping itself with code 1 at its 50th GET: about 4 s into a load of 20 req/s.
EXITING = textwrap.dedent(
    f"""
    import importlib.util, os, sys
    spec = importlib.util.spec_from_file_location("login_app", {str(HERE / "login_app.py")!r})
    app = importlib.util.module_from_spec(spec); spec.loader.exec_module(app)
    served = [0]
    do_get = app.Handler.do_GET
    def counting(self):
        served[0] += 1
        if served[0] == 50:
            os._exit(1)
        return do_get(self)
    app.Handler.do_GET = counting
    app.http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), app.Handler).serve_forever()
    """
)


@pytest.mark.slow
def test_an_app_that_exits_mid_level_stops_the_run_keeping_the_finished_levels(tmp_path):
    (tmp_path / "exiting.py").write_text(EXITING)
    ladder = [
        "--start",
        "20",
        "--step",
        "0",
        "--steps",
        "4",
        "--hold",
        "2",
        "--warmup",
        "0",
        "--no-app-warmup",
    ]
    ran, out, _ = app_run(tmp_path, *ladder, *LENIENT, serve=f"{sys.executable} exiting.py {{port}}")
    assert ran.returncode == 1, ran.stderr
    result = json.loads((out / "result.json").read_text())
    finished = len(result["levels"])
    assert 1 <= finished < 4 and result["status"] == "app exited"
    words = result["app"]["exited"]["words"]
    assert re.fullmatch(r"the app exited with code 1 at \d+\.\d s", words)
    assert result["stopped_because"] == f"level {finished + 1}: {words}"
    assert ran.stderr.strip().splitlines()[-1] == (
        f"Error: level {finished + 1}: {words}; the levels finished before it are in {out / 'result.json'}"
    )
    assert not _pythons(tmp_path)


@pytest.mark.slow
def test_an_app_that_exits_during_the_warm_up_stops_the_run_in_one_line_before_any_level(tmp_path):
    # The same app stopping at its 30th GET: within the warm-up's settling (each read sent 20 times or more).
    (tmp_path / "exiting.py").write_text(EXITING.replace("served[0] == 50", "served[0] == 30"))
    ran, out, _ = app_run(tmp_path, *LADDER, *LENIENT, serve=f"{sys.executable} exiting.py {{port}}")
    assert ran.returncode == 1, ran.stderr
    line = "the app exited with code 1 during the warm-up, before the first level"
    assert ran.stderr.strip().splitlines()[-1] == f"Error: {line}"
    result = json.loads((out / "result.json").read_text())
    assert (result["status"], result["stopped_because"], result["levels"]) == ("failed", line, [])
    assert not _pythons(tmp_path)


@pytest.mark.slow
def test_a_login_that_fails_is_one_line_and_nothing_is_sent(tmp_path):
    ran, out, _ = app_run(tmp_path, *LADDER, requests=request_file(tmp_path, password="wrong"))
    assert ran.returncode == 1, ran.stderr
    assert ran.stderr.strip().splitlines()[-1] == (
        "Error: session 1: the login POST /login answered 200, not one of 302: "
        "b'Please enter a correct username and password.'"
    )
    assert json.loads((out / "result.json").read_text())["levels"] == []
    assert not _pythons(tmp_path)


FAILING = textwrap.dedent(
    """
    from dbladder.app.requests import Request, Requests

    requests = Requests(requests=[
        Request("home", "GET", "/", success=(201,)),
        Request("missing", "GET", "/items/999/"),
    ])
    """
)


@pytest.mark.slow
def test_answers_outside_a_requests_success_statuses_are_failures_with_their_first_bodies(tmp_path):
    requests = request_file(tmp_path, text=FAILING)
    ran, out, _ = app_run(tmp_path, *LADDER, *LENIENT, requests=requests)
    assert ran.returncode == 0, ran.stderr
    result = json.loads((out / "result.json").read_text())
    for level in result["levels"]:  # every request failed: home's 200 is not its 201, missing is a 404
        assert level["fail_pct"] == 100.0
        assert level["operations"]["home"]["failures"] == {
            "unexpected": level["operations"]["home"]["requests"]
        }
        assert level["operations"]["missing"]["failures"] == {
            "4xx": level["operations"]["missing"]["requests"]
        }
    failures = {(kind["request"], kind["status"]): kind for kind in result["app"]["failures"]}
    assert set(failures) == {("home", 200), ("missing", 404)}
    assert failures[("home", 200)]["bodies"] == ["home"] * 3
    assert failures[("missing", 404)]["bodies"] == ["no such item"] * 3
    assert sum(kind["count"] for kind in failures.values()) == 80  # every request of 2 levels of 40


ROWS = textwrap.dedent(
    """
    from dbladder.app.requests import Param, Request, Requests

    requests = Requests(requests=[
        Request("asset", "GET", "/assets/{id}/", params={"id": Param.rows("SELECT id FROM tracker_asset")}),
        Request("item", "GET", "/items/{id}/", params={"id": Param.rows("SELECT nope FROM items")}),
        Request("latest", "GET", "/items/{id}/", params={"id": Param.rows("SELECT id FROM items")}),
    ])
    """
)
REFUSED = {  # each engine's own words for a table the app's setup has not made and a wrong column
    "sqlite": ("SQLite", "no such table: tracker_asset", "no such column: nope"),
    "postgresql": ("PostgreSQL", 'relation "tracker_asset" does not exist', 'column "nope" does not exist'),
    "mariadb": (
        "MariaDB",
        "Table '{database}.tracker_asset' doesn't exist",
        "Unknown column 'nope' in 'SELECT'",
    ),
}


@pytest.mark.parametrize("any_url", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_every_param_rows_error_is_a_line_naming_the_request_and_the_query_before_the_app_starts(
    any_url, tmp_path
):
    url = parse_url(any_url)

    async def empty_table():
        async with opened(url) as engine, engine.transaction() as session:
            await session.execute("CREATE TABLE items (id INTEGER)")

    asyncio.run(empty_table())
    requests = request_file(tmp_path, text=ROWS)
    ran = dbladder_here(
        "run", "--db", any_url, "--app", "touch started", "--app-dir", str(tmp_path), "--requests",
        str(requests), "--out", str(tmp_path / "out"),
    )  # fmt: skip
    label, no_table, no_column = REFUSED[url.engine]
    when = "(it reads the app's data after --app-setup, before the app starts)"
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.splitlines()[-3:] == [
        f"Error: {requests}: the request 'asset': Param.rows('SELECT id FROM tracker_asset'): "
        f"{label} refuses it: {no_table.format(database=url.database)} {when}",
        f"{requests}: the request 'item': Param.rows('SELECT nope FROM items'): {label} refuses it: "
        f"{no_column} {when}",
        f"{requests}: the request 'latest': Param.rows('SELECT id FROM items') found no rows {when}",
    ]
    assert not (tmp_path / "started").exists() and not (tmp_path / "out" / "app.log").exists()
    result = json.loads((tmp_path / "out" / "result.json").read_text())  # ended, not "running"
    assert result["status"] == "refused" and result["stopped_because"].endswith(f"found no rows {when}")
