"""User mistakes found on a first afternoon: each is one exact line and an exit code, never a traceback.

In this process (cli_support.dbladder_here), but for one through the entry point: a message and an
exit code are the same either way, and a new interpreter per case costs 0.4 s of imports."""

import json
import os

import pytest
from cli_support import dbladder_here


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "Error: {path}: no such workload file\n"),
        ("x = (\n", "Error: {path}:1: syntax error: '(' was never closed\n"),
        ("workload = 5\n", "Error: {path}: `workload` is an int, not a dbladder Workload\n"),
        (
            "x = 1\n",
            "Error: {path}: the file defines no `workload`; end it with `workload = App(...)` "
            '(the README\'s section "Your own app" shows a complete one)\n',
        ),
    ],
)
@pytest.mark.parametrize("as_json", [False, True])
def test_a_workload_file_that_cannot_be_loaded_exits_2(tmp_path, content, message, as_json):
    path = tmp_path / "app.py"
    if content is not None:
        path.write_text(content)
    result = dbladder_here("workloads", str(path), *(["--json"] if as_json else []))
    assert result.returncode == 2
    assert result.stderr == message.format(path=path)
    if as_json:
        listed = json.loads(result.stdout)
        assert listed[-1]["name"] == str(path) and listed[-1]["problem"] == message[7:-1].format(path=path)
    else:
        assert result.stdout.startswith("shop  (built-in)") and str(path) not in result.stdout


def test_workloads_lists_each_ones_sizes_and_presets():
    result = dbladder_here("workloads")
    assert result.returncode == 0, result.stderr
    assert (
        "    sizes products=100000, orders=1000000 (--size NAME=N); "
        "presets read, shop20, shop20-1w, write, users-read, users-write, spike, quick\n" in result.stdout
    )
    chirp = (
        "    sizes users=50000, posts=1000000 (--size NAME=N); presets post, profile, timeline, mixed, quick"
    )
    assert chirp + "\n" in result.stdout
    listed = {item["name"]: item for item in json.loads(dbladder_here("workloads", "--json").stdout)}
    assert listed["chirp"]["presets"] == ["post", "profile", "timeline", "mixed", "quick"]


APP = """
from dbladder.workloads.declare import App, Column, Index, Param, Query, Table

workload = App(
    name="bad",
    tables=[
        Table(
            "t",
            [Column("id", "bigint"), Column("v", "int"), Column("tag", "text", max_length=8)],
            primary_key=["id"],
        )
    ],
    indexes=[Index("t_by_tag", "t", ("tag",), unique=True)],
    sizes={"t": 20},
    rows={"t": lambda n, r: ROW},
    operations=[
        Query("one", "GET /t/{id}", "SELECT v FROM t WHERE id = ?", params={"id": Param.row("t")}, one=True)
    ],
)
"""


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('(n, "abc" if n == 3 else n, f"t{n}")', "rows['t'] row 3, column 'v': 'abc' is text, not an int"),
        (
            '(n if n != 7 else 6, n, f"t{n}")',
            "rows['t'] row 7, column 'id': repeats the primary key (id = 6) of an earlier row",
        ),
        (
            '(n, n, "same" if n > 4 else f"t{n}")',
            "rows['t'] row 6, column 'tag': repeats the unique index (tag = 'same') of an earlier row",
        ),
    ],
)
def test_a_bad_row_is_one_line_naming_file_table_row_and_column_on_every_engine(
    any_url, tmp_path, row, message
):
    path = tmp_path / "bad.py"
    path.write_text(APP.replace("ROW", row))
    result = dbladder_here("seed", "--workload", str(path), "--db", any_url)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[-1] == f"Error: {path}: {message}"
    assert "Traceback" not in result.stderr


def test_engines_on_a_missing_sqlite_file_says_so_and_creates_nothing(tmp_path):
    result = dbladder_here("engines", "--db", "sqlite:///missing.db", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        f"Error: the SQLite file {tmp_path}/missing.db does not exist; `dbladder seed` creates it\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["engines", "seed", "run"])
def test_a_bad_url_from_the_environment_names_the_variable(tmp_path, command):
    result = dbladder_here(command, cwd=tmp_path, env={**os.environ, "DBLADDER_DB_URL": "nope"})
    assert result.returncode == 2
    assert result.stderr == (
        "Error: DBLADDER_DB_URL: not a database URL: 'nope'; expected e.g. sqlite:///shop.db, "
        "postgresql://user@127.0.0.1:5432/db or mariadb://root@127.0.0.1:3306/test\n"
    )


@pytest.mark.parametrize(
    ("args", "problems"),
    [
        (["engines", "--pool", "0"], ["--pool must be from 1 to 10000, not 0"]),
        (
            ["serve", "--pool", "0"],
            [
                "--pool must be from 1 to 10000, not 0",
                "--pool (0) must be at least one connection per worker (1)",
            ],
        ),
        (
            ["run", "--hold", "0", "--workers", "0", "--p95", "0"],
            [
                "--hold must be above 0 seconds, not 0",
                "--warmup must be 0 or more and under the hold (0 s), not 2",
                "--p95 must be above 0, not 0.0",
                "--workers must be from 1 to 64, not 0",
            ],
        ),
        (
            ["bench", "--native", "--db", "nope", "--seconds", "0"],
            [
                "--db: not a database URL: 'nope'; expected e.g. sqlite:///shop.db, "
                "postgresql://user@127.0.0.1:5432/db or mariadb://root@127.0.0.1:3306/test",
                "--seconds must be from 0.5 to 3600, not 0.0",
            ],
        ),
    ],
)
def test_invalid_settings_name_the_options_not_the_config_fields(tmp_path, args, problems):
    result = dbladder_here(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "Error: invalid configuration:\n" + "".join(f"  - {p}\n" for p in problems)


@pytest.mark.parametrize("command", ["seed", "run"])
def test_one_rule_for_the_seed_on_seed_and_run(tmp_path, command):
    result = dbladder_here(command, "--seed", "-1", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--seed': -1 is not in the range 0<=x<=9223372036854775807."
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["seed", "run"])
def test_a_size_given_twice_is_refused(tmp_path, command):
    result = dbladder_here(command, "--size", "orders=5000", "--size", "orders=6000", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "Error: --size orders is given twice (orders=5000 and orders=6000); give one\n"


def test_the_help_lists_every_exit_code_a_command_can_end_with():
    run = " ".join(dbladder_here("run", "--help").stdout.split())
    assert run.endswith(
        "Exit codes: 0 success, 1 runtime error, 2 usage error, 3 an --expect-* not met, "
        "4 acknowledged writes lost or corrupted."
    )
    compare = " ".join(dbladder_here("compare", "--help").stdout.split())
    assert compare.endswith(
        "Exit codes: 0 success, 1 runtime error, 2 usage error, 3 an --expect-* not met, "
        "4 acknowledged writes lost or corrupted."
    )
