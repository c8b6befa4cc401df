"""docs/result-schema.md and the shipped JSON Schemas list the same fields, and the schemas are valid.

Each documented field is a table row whose first cell is the field's path in backticks:
`levels[].p95_ms` (array items), `engine.settings.*` (any key of a map), `histogram.count` (the
shared histogram definition). The same paths are walked out of the JSON Schema.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from dbladder.result.schema import COMPARE_SCHEMA, RESULT_SCHEMA, json_schema

DOC = Path(__file__).parents[2] / "docs" / "result-schema.md"


def schema_paths(schema: dict[str, Any], path: str = "") -> list[str]:
    """Every field path a schema defines, in the documentation's notation."""
    paths = []
    for name, child in schema.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        paths.append(here)
        paths += schema_paths(child, here)
    if isinstance(schema.get("additionalProperties"), dict):
        paths.append(f"{path}.*")
        paths += schema_paths(schema["additionalProperties"], f"{path}.*")
    if isinstance(schema.get("items"), dict):
        paths += schema_paths(schema["items"], f"{path}[]")
    for name, child in schema.get("$defs", {}).items():
        paths += schema_paths(child, name)
    return paths


def documented_paths(section: str) -> list[str]:
    """The field paths in the tables of one `## ` section of the documentation."""
    text = DOC.read_text()
    body = text.split(f"\n## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", body, re.MULTILINE)


def test_the_schemas_are_valid_json_schemas():
    for version in (RESULT_SCHEMA, COMPARE_SCHEMA):
        Draft202012Validator.check_schema(json_schema(version))
        assert json_schema(version)["$id"] == version


def test_every_result_field_is_documented_and_every_documented_field_is_in_the_schema():
    documented = documented_paths("result.json")
    defined = schema_paths(json_schema(RESULT_SCHEMA))
    assert len(documented) == len(set(documented)), "a field is documented twice"
    assert sorted(set(defined) - set(documented)) == [], "in the schema, not documented"
    assert sorted(set(documented) - set(defined)) == [], "documented, not in the schema"


def test_every_compare_field_is_documented_and_every_documented_field_is_in_the_schema():
    assert sorted(documented_paths("compare.json")) == sorted(schema_paths(json_schema(COMPARE_SCHEMA)))


def test_required_fields_are_the_ones_documented_without_optional():
    """A field documented as "optional" must not be required by the schema, and the reverse."""
    text = DOC.read_text().split("\n## compare.json", 1)[0]
    optional = {
        path
        for path, kind in re.findall(r"^\| `([^`]+)` \| ([^|]+) \|", text, re.MULTILINE)
        if "optional" in kind
    }

    def required(schema: dict[str, Any], path: str = "") -> set[str]:
        found = set()
        for name, child in schema.get("properties", {}).items():
            here = f"{path}.{name}" if path else name
            if name in schema.get("required", []):
                found.add(here)
            found |= required(child, here)
        if isinstance(schema.get("items"), dict):
            found |= required(schema["items"], f"{path}[]")
        if isinstance(schema.get("additionalProperties"), dict):
            found |= required(schema["additionalProperties"], f"{path}.*")
        return found

    schema = json_schema(RESULT_SCHEMA)
    must = required(schema) | {f"histogram.{name}" for name in schema["$defs"]["histogram"]["required"]}
    all_paths = set(schema_paths(schema))
    assert sorted(optional & must) == [], "documented as optional, but required"
    # Fields inside an optional or nullable object may be required within it; top-level ones are listed.
    top_level = {path for path in all_paths if "." not in path and "[" not in path}
    assert sorted(top_level - must - optional) == [], "neither required nor documented as optional"
