"""A run parses its database URL once: the parsed value travels through the round's steps (the
config and its copies, the route, the service's config, the observer), not the text. So does a
comparison, each --db once however many runs and entries it has, and a run given its URL in
DBLADDER_DB_URL, whose check of the variable is that one parse.

The URL parser is counted, not replaced: every module of dbladder that holds it by name gets a
wrapper that records where it was called from and then parses, during a real short `dbladder run`
on a real SQLite file, with its real service and generator processes (which parse the URL again
in their own processes: what is counted is this one, the run's)."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections import Counter
from collections.abc import Iterator
from types import ModuleType

import pytest
from cli_support import dbladder_here

import dbladder.cli.compare
import dbladder.cli.run
import dbladder.run.round  # noqa: F401
from dbladder import urls
from dbladder.plans import Ladder
from dbladder.run.compare import CompareConfig, labels_for
from dbladder.run.config import RunConfig


def _bindings(function: object) -> list[ModuleType]:
    """Every loaded module of dbladder that holds `function` under the parser's name."""
    return [
        module
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == "dbladder" and getattr(module, "parse_url", None) is function
    ]


@pytest.fixture
def parser_calls() -> Iterator[list[str]]:
    """Each call of `parse_url` while the test runs: the URL, then where it came from (file:line
    of its caller), as "URL <- file:line function"."""
    original = urls.parse_url
    calls: list[str] = []

    def counting(raw: str) -> urls.DatabaseURL:
        caller = traceback.extract_stack(limit=2)[0]
        calls.append(f"{raw} <- {caller.filename}:{caller.lineno} {caller.name}")
        return original(raw)

    held = _bindings(original)
    for module in held:
        module.parse_url = counting
    try:
        yield calls
    finally:  # also a module first imported during the test took the wrapper: give it the parser
        for module in _bindings(counting):
            module.parse_url = original


def parses_per_url(calls: list[str]) -> Counter[str]:
    """How many times each URL was parsed."""
    return Counter(call.split(" <- ")[0] for call in calls)


# A short round on tiny data: two levels of a ladder, one generator worker.
SHORT_ROUND = (
    *("--start", "50", "--step", "50", "--steps", "2", "--hold", "0.6", "--warmup", "0.2"),
    *("--size", "products=500", "--size", "orders=1000", "--workers", "1"),
)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["http", "direct"])
def test_a_run_parses_its_database_url_once(target, parser_calls, tmp_path):
    out = tmp_path / "bundle"
    result = dbladder_here(
        "run",
        "--db",
        f"sqlite:///{tmp_path}/shop.db",
        "--target",
        target,
        *SHORT_ROUND,
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "result.json").read_text())
    assert document["status"] == "complete" and document["levels"]  # a whole run, not a refusal
    assert len(parser_calls) == 1, "\n".join(parser_calls)


@pytest.mark.slow
def test_a_run_given_its_url_in_the_environment_parses_it_once(parser_calls, tmp_path):
    url = f"sqlite:///{tmp_path}/shop.db"
    out = tmp_path / "bundle"
    # No --db: the variable's check (which names the variable for a bad URL) is the run's one parse.
    environment = {**os.environ, "DBLADDER_DB_URL": url}
    result = dbladder_here("run", *SHORT_ROUND, "--out", str(out), cwd=tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "result.json").read_text())
    assert document["status"] == "complete" and document["config"]["db_url"] == url
    assert parses_per_url(parser_calls) == {url: 1}, "\n".join(parser_calls)


def test_a_bad_url_in_the_environment_is_one_line_naming_the_variable(tmp_path):
    environment = {**os.environ, "DBLADDER_DB_URL": "sqlite://host/shop.db"}
    result = dbladder_here(
        "run", *SHORT_ROUND, "--out", str(tmp_path / "bundle"), cwd=tmp_path, env=environment
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "Error: DBLADDER_DB_URL: a SQLite URL has no host: 'sqlite://host/shop.db'; "
        "write sqlite:///relative.db or sqlite:////abs/path.db"
    ]
    assert not (tmp_path / "bundle").exists()


def test_a_comparisons_entries_and_their_rounds_parse_each_url_once(parser_calls, tmp_path):
    a, b = f"sqlite:///{tmp_path}/a.db", "postgresql://postgres@127.0.0.1:5432/test"
    base = RunConfig(db_url=a, plan=Ladder(50, 50, 2, 1.0), out_dir=tmp_path).checked()
    # `b` twice, the second time through the latency relay: two entries, one database. Nothing
    # here connects: the config is checked and each round made, as run_compare makes them.
    config = CompareConfig(db_urls=(a, b, b), base=base, added_latencies=(None, None, 0.0), out_dir=tmp_path)
    config = config.checked()
    assert labels_for(config.entries) == ["sqlite", "postgresql", "postgresql-+0ms"]
    rounds = [config.run_config(entry).with_url(entry.parsed).checked() for entry in config.entries] * 2
    assert [round.database.raw for round in rounds] == [a, b, b] * 2
    assert parses_per_url(parser_calls) == {a: 1, b: 1}, "\n".join(parser_calls)


@pytest.mark.slow
def test_a_comparison_parses_each_database_url_once(parser_calls, tmp_path):
    # Two databases, each run twice: a URL parsed again per entry, per run or per level would show
    # (three databases were six rounds of about 6 s each on a busy machine for the same finding).
    a, b = (f"sqlite:///{tmp_path}/{name}.db" for name in "ab")
    out = tmp_path / "compare"
    result = dbladder_here(
        "compare",
        *("--db", a, "--db", b),
        *("--runs", "2", "--target", "direct"),
        *SHORT_ROUND,
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "compare.json").read_text())
    # Every database ran both its runs: four rounds, each URL parsed once for all of them.
    assert document["status"] == "complete" and len(document["runs"]) == 4
    assert [database["db_url"] for database in document["databases"]] == [a, b]
    assert parses_per_url(parser_calls) == {a: 1, b: 1}, "\n".join(parser_calls)
