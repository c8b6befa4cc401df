"""A direct-mode run's result that carries the native reference (`dbladder bench --native --result`):
found and checked before anything is measured, then written back with its reports rebuilt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DbladderError, UsageError
from ..report.bundle import RESULT, build_reports, load_bundle
from ..result.files import write_json
from ..result.schema import RESULT_SCHEMA, problem
from .native import attach, result_problems


def result_for_reference(result_path: Path, db_url: str) -> tuple[dict[str, Any], Path]:
    """The result at `result_path` (its file or its folder) and its result.json, or UsageError
    saying why it cannot carry the native reference of `db_url`."""
    bundle = load_bundle(result_path)
    if bundle.kind != "result":
        raise UsageError(f"{result_path} is a comparison: give one direct-mode run's {RESULT}")
    result, result_file = bundle.runs[0], bundle.path / RESULT
    problems = result_problems(result, db_url)
    if problems:
        raise UsageError(f"{result_file} cannot carry this reference: {'; '.join(problems)}")
    return result, result_file


def save_reference(result: dict[str, Any], result_file: Path, reference: dict[str, Any]) -> dict[str, Any]:
    """Write the reference into the result as its `native` block (with the run's ratio to it), and
    rebuild the bundle's reports. Returns the block."""
    block = attach(result, reference)
    result["native"] = block
    found = problem(result, RESULT_SCHEMA)
    if found:  # a bug, not a user's mistake: say so rather than write a result the reports refuse
        raise DbladderError(f"the native block does not fit {RESULT_SCHEMA}: {found}")
    write_json(result_file, result)
    build_reports([result_file.parent], result_file.parent)
    return block
