"""A run parses its database URL once: the parsed value travels through the round's steps (the
config and its copies, the route, the service's config, the observer), not the text.

The URL parser is counted, not replaced: every module of dbladder that holds it by name gets a
wrapper that records where it was called from and then parses, during a real short `dbladder run`
on a real SQLite file, with its real service and generator processes (which parse the URL again
in their own processes: what is counted is this one, the run's)."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Iterator
from types import ModuleType

import pytest
from cli_support import dbladder_here

import dbladder.cli.run
import dbladder.run.round  # noqa: F401
from dbladder import urls


def _bindings(function: object) -> list[ModuleType]:
    """Every loaded module of dbladder that holds `function` under the parser's name."""
    return [
        module
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == "dbladder" and getattr(module, "parse_url", None) is function
    ]


@pytest.fixture
def parser_calls() -> Iterator[list[str]]:
    """Where each call of `parse_url` came from (file:line of its caller), while the test runs."""
    original = urls.parse_url
    calls: list[str] = []

    def counting(raw: str) -> urls.DatabaseURL:
        caller = traceback.extract_stack(limit=2)[0]
        calls.append(f"{caller.filename}:{caller.lineno} {caller.name}")
        return original(raw)

    held = _bindings(original)
    for module in held:
        module.parse_url = counting
    try:
        yield calls
    finally:  # also a module first imported during the test took the wrapper: give it the parser
        for module in _bindings(counting):
            module.parse_url = original


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
        "--start",
        "50",
        "--step",
        "50",
        "--steps",
        "2",
        "--hold",
        "1.2",
        "--warmup",
        "0.4",
        "--size",
        "products=500",
        "--size",
        "orders=1000",
        "--workers",
        "1",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "result.json").read_text())
    assert document["status"] == "complete" and document["levels"]  # a whole run, not a refusal
    assert len(parser_calls) == 1, "\n".join(parser_calls)
