"""User mistakes found on a first afternoon: each is one exact line and an exit code, never a traceback."""

import json

import pytest
from cli_support import dbladder


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "Error: {path}: no such workload file\n"),
        ("x = (\n", "Error: {path}:1: syntax error: '(' was never closed\n"),
        ("workload = 5\n", "Error: {path}: `workload` is a int, not a dbladder Workload\n"),
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
    result = dbladder("workloads", str(path), *(["--json"] if as_json else []))
    assert result.returncode == 2
    assert result.stderr == message.format(path=path)
    if as_json:
        listed = json.loads(result.stdout)
        assert listed[-1]["name"] == str(path) and listed[-1]["problem"] == message[7:-1].format(path=path)
    else:
        assert result.stdout.startswith("shop  (built-in)") and str(path) not in result.stdout


def test_workloads_lists_each_ones_sizes_and_presets():
    result = dbladder("workloads")
    assert result.returncode == 0, result.stderr
    assert (
        "    sizes products=100000, orders=1000000 (--size NAME=N); "
        "presets read, shop20, shop20-1w, write, users-read, users-write, spike\n" in result.stdout
    )
    chirp = "    sizes users=50000, posts=1000000 (--size NAME=N); presets post, profile, timeline, mixed\n"
    assert chirp in result.stdout


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
    result = dbladder("seed", "--workload", str(path), "--db", any_url)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[-1] == f"Error: {path}: {message}"
    assert "Traceback" not in result.stderr
