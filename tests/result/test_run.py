"""The typed run result: a document read and written back unchanged, valid against the shipped schema."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import pytest

from dbladder.engine_registry import run_settings
from dbladder.errors import UnknownBundleVersion
from dbladder.plans import Ladder
from dbladder.result.level import Level
from dbladder.result.part import Part
from dbladder.result.run import RunResult, read_result
from dbladder.result.schema import RESULT_SCHEMA, json_schema, problem
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

FIXTURES = Path(__file__).parent / "fixtures"
PREVIOUS = FIXTURES / "previous-release-users.json"
"""A users run's result.json as the release before the typed result wrote it, untouched."""


def previous() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PREVIOUS.read_text())
    return data


def test_a_result_of_the_previous_release_comes_back_unchanged_and_valid():
    document = previous()
    result = RunResult.from_json(document)
    assert result.to_json() == document
    assert json.dumps(result.to_json(), indent=2) + "\n" == PREVIOUS.read_text()
    assert problem(result.to_json(), RESULT_SCHEMA) is None


def test_its_parts_read_as_attributes():
    result = RunResult.from_json(previous())
    assert result.engine_name == "sqlite"
    assert result.config.users is not None
    assert [phase.users for phase in result.config.users.phases] == [10, 20]
    assert isinstance(result.levels[0], Level) and result.levels[0].users == 10
    assert result.levels[0].operations is not None and "product" in result.levels[0].operations
    assert result.workload is not None and result.workload.write_share == 0.05
    assert result.integrity is not None and result.integrity.passed is True
    assert result.environment.facts()["cpu_cores"] == 2


def test_an_unknown_schema_names_its_writer_in_one_line():
    document = previous() | {"schema": "dbladder.result/9", "dbladder_version": "9.0.0"}
    with pytest.raises(UnknownBundleVersion) as raised:
        read_result(document, "x/result.json")
    message = str(raised.value)
    assert "\n" not in message
    assert "x/result.json is schema 'dbladder.result/9', which this dbladder" in message
    assert (
        "does not read (dbladder.result/3 or dbladder.result/2); it was written by dbladder 9.0.0" in message
    )
    assert read_result(previous()) == RunResult.from_json(previous())


def _resolved(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """A schema node with its `$ref` (`#/$defs/fault`) followed."""
    reference = node.get("$ref")
    if not reference:
        return node
    return _resolved(root["$defs"][reference.rsplit("/", 1)[1]], root)


def _declared(
    part: type[Part], schema: dict[str, Any], path: str, root: dict[str, Any] | None = None
) -> list[str]:
    """Fields a part declares that the schema does not define at that place (`root`: the whole
    schema, where its `$defs` are)."""
    missing = []
    hints = typing.get_type_hints(part)
    properties = schema.get("properties", {})
    for field in dataclasses.fields(part):
        if field.name in ("extra", "layout"):
            continue
        if field.name not in properties:
            missing.append(f"{path}{field.name}")
            continue
        child = _resolved(properties[field.name], root or schema)
        for inner in _parts_in(hints[field.name]):
            node = child.get("items", child) if "items" in child else child
            node = node.get("additionalProperties", node) if not node.get("properties") else node
            node = _resolved(node, root or schema)
            missing += _declared(inner, node, f"{path}{field.name}.", root or schema)
    return missing


def _parts_in(hint: Any) -> list[type[Part]]:
    if isinstance(hint, type) and issubclass(hint, Part):
        return [hint]
    return [found for arg in typing.get_args(hint) for found in _parts_in(arg)]


def test_every_typed_field_is_a_field_of_the_schema():
    assert _declared(RunResult, json_schema(RESULT_SCHEMA), "") == []


@pytest.mark.slow
def test_a_real_short_run_round_trips_and_validates(sqlite_url, tmp_path):
    config = RunConfig(
        db_url=sqlite_url,
        plan=Ladder(40, 40, 2, 1.0, warmup=0.25),
        sizes={"products": 500, "orders": 1000},
        target="direct",
        pool_size=2,
        out_dir=tmp_path,
    )
    run_round(config)
    document = json.loads((tmp_path / "result.json").read_text())
    result = RunResult.from_json(document)
    assert result.to_json() == document
    assert problem(result.to_json(), RESULT_SCHEMA) is None
    assert [level.offered_rps for level in result.levels] == [40, 80]
    # Every key the run wrote is a typed field (issue 33), but the engines' run settings.
    assert _extra_keys(result) <= {"config.sqlite_writers", "service.sqlite_writers"}


def _extra_keys(part: Part, path: str = "") -> set[str]:
    """Every key left in the `extra` of a part or of the parts inside it, by its path."""
    found = {f"{path}{key}" for key in part.extra}
    for field in dataclasses.fields(part):
        value = getattr(part, field.name)
        values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else [value]
        for inner in values:
            if isinstance(inner, Part):
                found |= _extra_keys(inner, f"{path}{field.name}.")
    return found


def _untyped(part: type[Part], schema: dict[str, Any], path: str, root: dict[str, Any]) -> list[str]:
    """Fields the schema defines for a part that the part does not declare (they would be `extra`)."""
    hints = typing.get_type_hints(part)
    fields = {field.name: field for field in dataclasses.fields(part)}
    found = [f"{path}{name}" for name in schema.get("properties", {}) if name not in fields]
    for name, child in schema.get("properties", {}).items():
        if name not in fields:
            continue
        for inner in _parts_in(hints[name]):
            node = _resolved(child, root)
            node = node.get("items", node) if "items" in node else node
            node = node.get("additionalProperties", node) if not node.get("properties") else node
            found += _untyped(inner, _resolved(node, root), f"{path}{name}.", root)
    return found


def test_every_field_of_the_schema_is_typed_but_the_engines_run_settings():
    # Issue 33: nothing this release writes is left in a part's `extra`, which only carries the
    # keys of a newer release's document back out. The one exception: each engine's run settings
    # (SQLite's `sqlite_writers`), keyed as its engine declares them and read through
    # `Config.engine_settings`, so that an engine registered from outside adds its own.
    schema = json_schema(RESULT_SCHEMA)
    settings = set(run_settings())
    untyped = [
        path for path in _untyped(RunResult, schema, "", schema) if path.rsplit(".", 1)[-1] not in settings
    ]
    assert untyped == []
    assert {"config.sqlite_writers", "service.sqlite_writers"} <= set(_untyped(RunResult, schema, "", schema))
