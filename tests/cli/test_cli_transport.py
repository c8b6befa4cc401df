"""--transport and --added-latency on the command line: entries of a comparison, and refusals."""

from __future__ import annotations

import pytest
from cli_support import dbladder_here

from dbladder.cli.compare import ORDER, compare, entry_routes
from dbladder.errors import UsageError


def routes(*args: str) -> tuple[tuple[str | None, ...], tuple[float | None, ...]]:
    context = compare.make_context("compare", list(args))
    params = context.params
    return entry_routes(
        context.meta[ORDER], len(params["db_urls"]), params["transport"], params["added_latency"]
    )


def test_each_route_option_belongs_to_the_db_before_it():
    assert routes(
        "--db", "A", "--transport", "unix",
        "--db", "A", "--transport", "tcp",
        "--db", "A", "--added-latency", "0", "--transport", "tcp",
        "--db", "A", "--transport", "tcp", "--added-latency", "2",
        "--db", "B",
    ) == (("unix", "tcp", "tcp", "tcp", None), (None, None, 0.0, 2.0, None))  # fmt: skip


def test_one_before_the_first_db_applies_to_every_entry_without_its_own():
    assert routes("--added-latency", "1", "--db", "A", "--db", "A", "--added-latency", "3") == (
        (None, None),
        (1.0, 3.0),
    )


def test_an_entry_given_one_option_twice_is_refused():
    with pytest.raises(UsageError, match="--transport is given twice for --db number 1"):
        routes("--db", "A", "--transport", "unix", "--transport", "tcp")


def test_run_refuses_a_transport_the_engine_does_not_have(tmp_path):
    result = dbladder_here(
        "run", "--workload", "orm", "--db", f"sqlite:///{tmp_path}/x.db", "--transport", "tcp"
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "transport tcp needs PostgreSQL or MariaDB (SQLite's only transport is inproc)" in result.stderr
    assert "Traceback" not in result.stderr


def test_compare_refuses_one_database_twice_by_the_same_route(tmp_path):
    url = f"sqlite:///{tmp_path}/x.db"
    result = dbladder_here("compare", "--workload", "orm", "--db", url, "--db", url)
    assert result.returncode == 2
    assert "the same database twice by the same route" in result.stderr
    assert "Traceback" not in result.stderr
