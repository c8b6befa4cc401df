"""The typed run result: a document read and written back unchanged, valid against the shipped schema."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import pytest

from dbladder.errors import UnknownBundleVersion
from dbladder.plans import PLANS, Ladder
from dbladder.result.level import Level
from dbladder.result.part import Part, document_keys
from dbladder.result.run import Config, RunResult, Service, read_result
from dbladder.result.schema import KIND_ALWAYS_LADDER, RESULT_SCHEMA, json_schema, problem
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


def test_a_result_from_before_kind_named_the_plan_reads_as_the_plan_its_config_names():
    # Versions 3 and 2 said "ladder" whatever plan ran; the fixture is a users run.
    for version in KIND_ALWAYS_LADDER:
        document = previous() | {"schema": version, "kind": "ladder"}
        result = read_result(document)
        assert (result.schema, result.kind) == (version, "users")
        assert result.to_json() == document
        assert problem(document, version) is None
    searched = previous() | {"schema": "dbladder.result/3", "model": "open", "search": {"held_rps": 400.0}}
    searched["config"] = searched["config"] | {"users": None, "search": {"start": 100.0}}
    assert read_result(searched).kind == "search"
    laddered = previous() | {"schema": "dbladder.result/3", "model": "open"}
    laddered["config"] = laddered["config"] | {"users": None, "ladder": {"start": 10.0, "step": 10.0}}
    assert read_result(laddered).kind == "ladder"


def test_a_result_of_this_version_says_the_plan_it_ran_as_it_was_written():
    document = previous() | {"schema": RESULT_SCHEMA, "kind": "users"}
    assert read_result(document).kind == "users"
    assert read_result(document).to_json() == document
    assert problem(document, RESULT_SCHEMA) is None
    # The schema names every plan, and only they; an older version says "ladder" only.
    assert json_schema(RESULT_SCHEMA)["properties"]["kind"]["enum"] == [plan.kind for plan in PLANS]
    assert problem(document | {"kind": "spike"}, RESULT_SCHEMA) is not None
    assert problem(document | {"schema": "dbladder.result/3"}, RESULT_SCHEMA) == "kind: 'ladder' was expected"


def test_its_parts_read_as_attributes():
    result = RunResult.from_json(previous())
    assert result.engine_name == "sqlite"
    assert result.config.engine_settings == {"sqlite_writers": 0}
    assert result.service is not None and result.service.engine_settings == {"sqlite_writers": 0}
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
        "does not read (dbladder.result/4 or dbladder.result/3 or dbladder.result/2); "
        "it was written by dbladder 9.0.0" in message
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
    for key, name in document_keys(part).items():
        if key not in properties:
            missing.append(f"{path}{key}")
            continue
        child = _resolved(properties[key], root or schema)
        for inner in _parts_in(hints[name]):
            node = child.get("items", child) if "items" in child else child
            node = node.get("additionalProperties", node) if not node.get("properties") else node
            node = _resolved(node, root or schema)
            missing += _declared(inner, node, f"{path}{key}.", root or schema)
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
    # Every key the run wrote is a typed field (issue 33), the engines' run settings included.
    assert _undeclared_keys(result) == set()
    assert result.config.engine_settings == {"sqlite_writers": 0}


def _undeclared_keys(part: Part, path: str = "") -> set[str]:
    """Every key of the document that a part, or a part inside it, does not declare, by its path."""
    found = {f"{path}{key}" for key in (part.layout.undeclared if part.layout else {})}
    for field in dataclasses.fields(part):
        value = getattr(part, field.name)
        values = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else [value]
        for inner in values:
            if isinstance(inner, Part):
                found |= _undeclared_keys(inner, f"{path}{field.name}.")
    return found


def _untyped(part: type[Part], schema: dict[str, Any], path: str, root: dict[str, Any]) -> list[str]:
    """Fields the schema defines for a part that the part does not declare (a document's would be
    kept as read, never typed)."""
    hints = typing.get_type_hints(part)
    keys = document_keys(part)
    found = [f"{path}{name}" for name in schema.get("properties", {}) if name not in keys]
    for name, child in schema.get("properties", {}).items():
        if keys.get(name) != name:
            continue
        for inner in _parts_in(hints[name]):
            node = _resolved(child, root)
            node = node.get("items", node) if "items" in node else node
            node = node.get("additionalProperties", node) if not node.get("properties") else node
            found += _untyped(inner, _resolved(node, root), f"{path}{name}.", root)
    return found


def test_every_field_of_the_schema_is_typed():
    # Issue 33: nothing this release writes is read as anything but a typed field; a key no field
    # declares is a newer release's, kept as read and written back. Each engine's run settings
    # (SQLite's `sqlite_writers`), keyed as its engine declares them, are `Config.engine_settings`
    # and `Service.engine_settings`, so that an engine registered from outside adds its own.
    schema = json_schema(RESULT_SCHEMA)
    assert _untyped(RunResult, schema, "", schema) == []
    assert document_keys(Config)["sqlite_writers"] == "engine_settings"
    assert document_keys(Service)["sqlite_writers"] == "engine_settings"


def test_the_engines_run_settings_come_back_in_their_place_and_a_newer_key_is_kept():
    document = previous()
    assert document["config"]["sqlite_writers"] == 0
    config = document["config"]
    at = list(config).index("sqlite_writers")
    newer = dict([*list(config.items())[:at], ("newer_setting", {"x": 1}), *list(config.items())[at:]])
    result = RunResult.from_json(document | {"config": newer})
    assert result.config.engine_settings == {"sqlite_writers": 0}
    assert json.dumps(result.to_json()["config"]) == json.dumps(newer)
    changed = result.updated({"config": result.config.updated({"sqlite_writers": 1})})
    assert list(changed.to_json()["config"]) == list(newer) and changed.config.engine_settings == {
        "sqlite_writers": 1
    }
