"""Reading the documents a bundle holds: result.json (one run) and compare.json (several runs side
by side), each checked against its schema version before anything reads it.

A document is read by key here, once, and nowhere after: the reports get `RunResult`s. A result of
an older schema this release still reads (`schema.RESULT_SCHEMAS_READ`) is read as it is: every
key it lacks reads as its field's default (`part.Part`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import CorruptBundle, UnknownBundleVersion
from .run import unknown_version
from .schema import COMPARE_SCHEMA, RESULT_SCHEMAS_READ, problem


def check_document(data: Any, where: str, expected: tuple[str, ...], known: str) -> None:
    """Raise UnknownBundleVersion when `data` is not of one of the `expected` schema versions
    (`known` says, in words, which this release reads where), CorruptBundle when it does not match
    its schema."""
    version = data.get("schema") if isinstance(data, Mapping) else None
    if version not in expected:
        raise UnknownBundleVersion(unknown_version(where, data, version, known))
    found = problem(data, version)
    if found:
        raise CorruptBundle(f"{where} does not match schema {version}: {found}")


def compare_runs(data: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """The runs of a checked compare.json, each checked as a result; CorruptBundle naming the first
    that is not one."""
    runs: list[dict[str, Any]] = list(data["runs"])
    for index, run in enumerate(runs):
        version = run.get("schema")
        found = problem(run, version) if version in RESULT_SCHEMAS_READ else "unknown schema"
        if found:
            known = " or ".join(RESULT_SCHEMAS_READ)
            raise CorruptBundle(f"{where}: runs[{index}] is not a {known} result: {found}")
    return runs


def kept_samples(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-second samples a result document kept in itself (`timeseries`), for a bundle without
    timeseries.csv; none when it kept none."""
    return list(data.get("timeseries") or [])


__all__ = ["COMPARE_SCHEMA", "RESULT_SCHEMAS_READ", "check_document", "compare_runs", "kept_samples"]
