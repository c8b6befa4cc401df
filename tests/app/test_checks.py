"""A request file's SQL on the app's data (dbladder/app/checks.py), on all three engines: every
`find` and invariant tried after --app-setup and before the app starts, each problem one line
naming the request or the invariant and its SQL (exit 2, the result ended as "refused"); a query
that fails after the load (the app dropped a table during the run) one flagged line with the
levels kept; the `Param.rows` values read once per round.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import dbladder, dbladder_here

from dbladder.app.checks import check_queries, check_writes
from dbladder.app.errors import AppQueryFailed
from dbladder.app.requests import Acknowledge, Invariant, Param, Request, RequestFileError, Requests
from dbladder.engines import opened
from dbladder.urls import parse_url

HERE = Path(__file__).resolve().parent
DROPPING_APP = f"{sys.executable} {HERE / 'dropping_app.py'} {{port}}"
WHEN = "tried after --app-setup, before the app starts"
FIND_WHEN = f"(it looks each acknowledged write up after the load; {WHEN})"
INVARIANT_WHEN = f"(it must return no rows after the load; {WHEN})"


def make_tables(url: str, *, sequence: bool = False) -> None:
    """items (2 rows) and audit, as an app's setup would leave them; with `sequence`, PostgreSQL's
    row_reads, which a Param.rows query advances once per row it reads."""

    async def make():
        async with opened(parse_url(url)) as engine:
            await remake_tables(engine, sequence=sequence)

    asyncio.run(make())


async def remake_tables(engine, *, sequence: bool = False) -> None:
    async with engine.transaction() as session:
        for table in ("items", "audit"):
            await session.execute(f"DROP TABLE IF EXISTS {table}")
        await session.execute("CREATE TABLE items (id INTEGER, title VARCHAR(20))")
        await session.execute("INSERT INTO items VALUES (1, 'one'), (2, 'two')")
        await session.execute("CREATE TABLE audit (id INTEGER)")
        if sequence:
            await session.execute("CREATE SEQUENCE row_reads")


def write(folder: Path, text: str) -> Path:
    path = folder / "app_requests.py"
    path.write_text(textwrap.dedent(text))
    return path


MISTAKES = """
    from dbladder.app.requests import Acknowledge, Invariant, Param, Request, Requests

    added = Acknowledge.location(r"/items/(\\d+)/")
    requests = Requests(
        requests=[
            Request("item", "GET", "/items/{id}/", params={"id": Param.rows("SELECT id FROM items")}),
            Request("add", "POST", "/items", acknowledge=added,
                    find="SELECT count(*) FROM itemz WHERE id = ?"),
            Request("quoted", "POST", "/items", acknowledge=added,
                    find="SELECT count(*) FROM items WHERE title = '?'"),
            Request("good", "POST", "/items", acknowledge=added,
                    find="SELECT count(*) FROM items WHERE id = ?"),
        ],
        invariants=[
            Invariant("untitled", "SELECT id FROM items WHERE titel = ''"),
            Invariant("bound", "SELECT id FROM items WHERE id = ?"),
            Invariant("fine", "SELECT id FROM items WHERE title = ''"),
        ],
    )
"""
REFUSED = {  # each engine's own words for a table that is not there and a wrong column
    "sqlite": ("SQLite", "no such table: itemz", "no such column: titel"),
    "postgresql": ("PostgreSQL", 'relation "itemz" does not exist', 'column "titel" does not exist'),
    "mariadb": ("MariaDB", "Table '{database}.itemz' doesn't exist", "Unknown column 'titel' in 'WHERE'"),
}


def test_every_find_and_invariant_problem_is_a_line_naming_it_before_the_app_starts(any_url, tmp_path):
    url = parse_url(any_url)
    make_tables(any_url)
    requests = write(tmp_path, MISTAKES)
    out = tmp_path / "out"
    ran = dbladder_here(
        "run", "--db", any_url, "--app", "touch started", "--app-dir", str(tmp_path),
        "--requests", str(requests), "--out", str(out),
    )  # fmt: skip
    label, no_table, no_column = REFUSED[url.engine]
    lines = [
        f"{requests}: the request 'add': find='SELECT count(*) FROM itemz WHERE id = ?': "
        f"{label} refuses it: {no_table.format(database=url.database)} {FIND_WHEN}",
        f"{requests}: the request 'quoted': find=\"SELECT count(*) FROM items WHERE title = '?'\": "
        f"{label} sees no placeholder in it: its ? is inside quotes or a comment {FIND_WHEN}",
        f"{requests}: the invariant 'untitled': \"SELECT id FROM items WHERE titel = ''\": "
        f"{label} refuses it: {no_column} {INVARIANT_WHEN}",
        f"{requests}: the invariant 'bound': 'SELECT id FROM items WHERE id = ?': "
        f"{label} sees a placeholder in it, and an invariant is run without values {INVARIANT_WHEN}",
    ]
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.splitlines()[-4:] == [f"Error: {lines[0]}", *lines[1:]]
    assert not (tmp_path / "started").exists() and not (out / "app.log").exists()
    # The result says the run was refused and why, not that it is still running.
    result = json.loads((out / "result.json").read_text())
    assert (result["status"], result["stopped_because"]) == ("refused", "; ".join(lines))
    assert result["levels"] == [] and result["finished_at"] is not None


def test_a_find_that_fails_when_run_says_what_the_engine_said_and_good_queries_pass(postgres_url):
    make_tables(postgres_url)
    failing = "SELECT count(*) FROM items WHERE id = ? OR 1 / (random() > 2)::int = 1"
    added = Acknowledge.location(r"/items/(\d+)/")
    declared = Requests(
        [
            Request("item", "GET", "/{id}", params={"id": Param.rows("SELECT id FROM items ORDER BY id")}),
            Request(
                "add", "POST", "/items", acknowledge=added, find="SELECT count(*) FROM items WHERE id = ?"
            ),
        ],
        invariants=[Invariant("untitled", "SELECT id FROM items WHERE title = ''")],
        source="f.py",
    )

    async def check(declared):
        async with opened(parse_url(postgres_url)) as engine:
            return await check_queries(engine, declared)

    assert asyncio.run(check(declared)) == {"SELECT id FROM items ORDER BY id": [1, 2]}
    broken = Requests([Request("add", "POST", "/items", acknowledge=added, find=failing)], source="f.py")
    with pytest.raises(RequestFileError) as caught:  # prepared, it divides by zero when run
        asyncio.run(check(broken))
    assert str(caught.value) == (
        f"f.py: the request 'add': find={failing!r}: PostgreSQL failed running it with NULL for its ?: "
        f"division by zero {FIND_WHEN}"
    )


GONE = {"sqlite": "no such table: {table}", "postgresql": 'relation "{table}" does not exist'}
GONE["mariadb"] = "Table '{database}.{table}' doesn't exist"


def test_a_query_that_fails_after_the_load_is_one_line_naming_it(any_url):
    url = parse_url(any_url)
    find = "SELECT count(*) FROM items WHERE id = ?"
    declared = Requests(
        [Request("add", "POST", "/items", acknowledge=Acknowledge.location(r"/(\d+)/"), find=find)],
        invariants=[Invariant("audited twice", "SELECT id FROM audit GROUP BY id HAVING count(*) > 1")],
        source="f.py",
    )

    async def after_the_load(acknowledged, table):
        async with opened(url) as engine:
            await remake_tables(engine)
            await check_queries(engine, declared)  # both ran before the load
            async with engine.transaction() as session:
                await session.execute(f"DROP TABLE {table}")
            return await check_writes(engine, declared, acknowledged, {})

    label = REFUSED[url.engine][0]
    with pytest.raises(AppQueryFailed) as caught:
        asyncio.run(after_the_load({"add": ["1"]}, "items"))
    gone = GONE[url.engine].format(table="items", database=url.database)
    assert str(caught.value) == f"the request 'add': find={find!r} failed after the load: {label}: {gone}"
    with pytest.raises(AppQueryFailed) as caught:
        asyncio.run(after_the_load({}, "audit"))
    gone = GONE[url.engine].format(table="audit", database=url.database)
    assert str(caught.value) == (
        "the invariant 'audited twice': 'SELECT id FROM audit GROUP BY id HAVING count(*) > 1' "
        f"failed after the load: {label}: {gone}"
    )


DROPS = """
    from dbladder.app.requests import Invariant, Param, Request, Requests

    requests = Requests(
        requests=[
            Request("item", "GET", "/items/{id}/", params={"id": Param.rows(ROWS)}),
            Request("drop", "POST", "/drop"),
        ],
        invariants=[Invariant("audited twice", "SELECT id FROM audit GROUP BY id HAVING count(*) > 1")],
    )
"""
# PostgreSQL's Param.rows query advances a sequence once per row it reads: 2 rows, read once.
ROWS = {"postgresql": "SELECT id FROM items WHERE nextval('row_reads') > 0"}
# One level of 20 req/s for 1 s, half of them POST /drop: the app drops the table at the first.
ONE_LEVEL = ["--start", "20", "--step", "0", "--steps", "1", "--hold", "1", "--warmup", "0"]
LENIENT = ["--p95", "5000", "--max-fail", "100"]


@pytest.mark.slow
def test_a_table_the_app_drops_during_the_run_is_a_flagged_line_and_the_levels_are_kept(any_url, tmp_path):
    url = parse_url(any_url)
    make_tables(any_url, sequence=url.engine == "postgresql")
    requests = write(tmp_path, DROPS.replace("ROWS", repr(ROWS.get(url.engine, "SELECT id FROM items"))))
    out = tmp_path / "out"
    # In a process of its own: the load's processes leave multiprocessing's resource tracker
    # running in the process that started them, for its whole life.
    ran = dbladder(
        "run", "--db", any_url, "--app", DROPPING_APP, "--app-dir", str(tmp_path),
        "--requests", str(requests), "--out", str(out), *ONE_LEVEL, *LENIENT,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    gone = GONE[url.engine].format(table="audit", database=url.database)
    line = (
        "the integrity check could not read the database: the invariant 'audited twice': "
        "'SELECT id FROM audit GROUP BY id HAVING count(*) > 1' failed after the load: "
        f"{REFUSED[url.engine][0]}: {gone}"
    )
    assert f"integrity: not checked ({line})" in ran.stdout
    result = json.loads((out / "result.json").read_text())
    assert line in result["flags"] and result["integrity"]["checked"] is False
    assert result["status"] == "complete" and len(result["levels"]) == 1
    assert result["levels"][0]["operations"]["drop"]["requests"] > 0

    async def after():
        async with opened(url) as engine:
            audit = await engine.table_exists("audit")
            if url.engine != "postgresql":
                return audit, None
            async with engine.read() as session:
                return audit, (await session.fetch_one("SELECT last_value FROM row_reads"))[0]

    audit, reads = asyncio.run(after())
    assert audit is False  # the app did drop it, during the run
    if url.engine == "postgresql":
        assert reads == 2  # the round read the 2 rows once, not again when the app started


def test_a_setup_that_fails_ends_the_result_as_failed_with_its_reason(tmp_path):
    out = tmp_path / "out"
    ran = dbladder_here(
        "run", "--db", f"sqlite:///{tmp_path / 'items.db'}", "--app", "touch started",
        "--app-dir", str(tmp_path), "--app-setup", "echo migrating; exit 3",
        "--requests", str(write(tmp_path, MISTAKES)), "--out", str(out),
    )  # fmt: skip
    because = (
        "the app's setup exited with code 3 (command: echo migrating; exit 3); its last lines: migrating; "
        "nothing was loaded"
    )
    assert ran.returncode == 1, ran.stderr
    assert ran.stderr.splitlines()[-1] == f"Error: {because}"
    result = json.loads((out / "result.json").read_text())
    assert (result["status"], result["stopped_because"], result["levels"]) == ("failed", because, [])
    assert not (tmp_path / "started").exists()


def test_a_comparison_stopped_by_a_refused_run_says_so_in_its_document(tmp_path):
    urls = [f"sqlite:///{tmp_path / name}" for name in ("a.db", "b.db")]
    for url in urls:
        make_tables(url)
    out = tmp_path / "out"
    ran = dbladder_here(
        "compare", "--db", urls[0], "--db", urls[1], "--app", "touch started", "--app-dir", str(tmp_path),
        "--requests", str(write(tmp_path, MISTAKES)), "--out", str(out),
    )  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.splitlines()[-4].startswith("Error: ") and "the request 'add': find=" in ran.stderr
    compared = json.loads((out / "compare.json").read_text())
    assert compared["status"] == "refused" and compared["finished_at"] is not None
    (first,) = out.glob("*-run1/result.json")  # the first run, which the check refused
    assert json.loads(first.read_text())["status"] == "refused"
    assert not (tmp_path / "started").exists()
