"""The JSON Schemas of result.json and compare.json, shipped in the package, and checking a document.

docs/result-schema.md documents every field; `result.schema.json` says the same to a machine (a
test keeps the two in step). A document is checked when a bundle is loaded, so a report of a
truncated, hand-edited or foreign file fails with one line naming the field, not a traceback
from deep inside a renderer. Fields may be added without a new version (the schemas allow
unknown ones); a field that changes meaning or disappears needs one.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

RESULT_SCHEMA = "dbladder.result/4"
COMPARE_SCHEMA = "dbladder.compare/2"
KIND_ALWAYS_LADDER = ("dbladder.result/3", "dbladder.result/2")
"""The result versions whose `kind` is "ladder" whatever plan ran; version 4 names the plan there
("ladder", "users" or "search"). Such a result reads as the plan its config block names
(`run.RunResult.from_json`) and is written back with "ladder", as it was read."""
RESULT_SCHEMAS_READ = (RESULT_SCHEMA, *KIND_ALWAYS_LADDER)
"""The result versions this release reads. Version 4 made `kind` the plan that ran (a version-3
reader, or any reader that took "ladder" for the open model's plan, would take a search or a users
run for a ladder). Version 3 added a level's last part-second to its `seconds` (with its
`length_s`): a version-2 reader would take it for a whole second, and its counts for a drop. A
version-2 result, whole seconds only, reads as one whose seconds are all whole; one schema file
checks the three."""
FILES = {
    **dict.fromkeys(RESULT_SCHEMAS_READ, "result.schema.json"),
    COMPARE_SCHEMA: "compare.schema.json",
}


@cache
def json_schema(version: str) -> dict[str, Any]:
    """The JSON Schema (as data) of a document version: RESULT_SCHEMA or COMPARE_SCHEMA."""
    text = resources.files(__package__).joinpath(FILES[version]).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator(version: str) -> Draft202012Validator:
    # jsonschema is imported when a document is first checked, not with the result's types: every
    # command and process that names a result would otherwise pay its 0.1-0.2 s import.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json_schema(version))


def _where(path: Any) -> str:
    """A JSON path as `levels[2].p95_ms`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "the document"


def problem(document: Any, version: str) -> str | None:
    """What is wrong with `document` as a `version` document, in one line; None when it is valid."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator(version).iter_errors(document))
    if error is None:
        return None
    return f"{_where(error.absolute_path)}: {error.message}"
