"""A comparison, typed: what `compare.json` holds (schema `dbladder.compare/2`), several runs side by side.

`dbladder compare` writes it (`dbladder.run.compare`), `dbladder report` of several bundles
merges their runs into one; each run is a `RunResult`. As with a run, `to_json(from_json(doc))`
gives the document back key for key (`part.Part`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UnknownBundleVersion
from .part import Part
from .run import RunResult, unknown_version
from .schema import COMPARE_SCHEMA, RESULT_SCHEMAS_READ


@dataclass(frozen=True, kw_only=True)
class DatabaseOutcome(Part):
    """A compared database's expectations over all its runs: met when every run met every one (and
    at least one run finished); a line per unmet expectation of each run (`per_database`)."""

    met: bool
    runs: int
    unmet: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Database(Part):
    """One database a comparison ran against: its label in the reports, its URL and route."""

    label: str | None = None
    db_url: str | None = None
    transport: str | None = None
    added_latency_ms: float | None = None
    # Whether its runs met every --expect-* (`per_database`).
    expectations: DatabaseOutcome | None = None


@dataclass(frozen=True, kw_only=True)
class Comparison(Part):
    """A comparison document (docs/result-schema.md): its runs, and how they were prepared."""

    schema: str = COMPARE_SCHEMA
    kind: str = "compare"
    dbladder_version: str | None
    created_at: str | None
    status: str | None = None
    finished_at: str | None = None
    databases: tuple[Database, ...] | None = None
    runs_per_database: int | None = None
    preparation: Mapping[str, Any] | None = None
    runs: tuple[RunResult, ...] = ()


def per_database(labels: Sequence[str], runs: Sequence[RunResult]) -> list[DatabaseOutcome]:
    """Each compared database's outcome from its runs' own `expectations`: one line per unmet
    expectation per run, naming the run ("run 2: p95 at ...")."""
    outcomes = []
    for label in labels:
        own = [run for run in runs if run.label == label and run.expectations]
        lines = [
            f"run {run.run}: {check.line}"
            for run in own
            if run.expectations is not None
            for check in run.expectations.checks
            if not check.met
        ]
        if not own:  # an interrupted comparison: a database none of whose runs finished
            lines = ["no run finished, so whether it meets the expectations is unknown"]
        outcomes.append(DatabaseOutcome(met=not lines, runs=len(own), unmet=tuple(lines)))
    return outcomes


def read_comparison(document: Any, where: str = "the comparison") -> Comparison:
    """A compare document as a Comparison; UnknownBundleVersion, in one line, when it (or one of its
    runs) is of a schema this release does not read."""
    version = document.get("schema") if isinstance(document, Mapping) else None
    if version != COMPARE_SCHEMA:
        raise UnknownBundleVersion(unknown_version(where, document, version, COMPARE_SCHEMA))
    for index, run in enumerate(document.get("runs") or ()):
        found = run.get("schema") if isinstance(run, Mapping) else None
        if found not in RESULT_SCHEMAS_READ:
            known = " or ".join(RESULT_SCHEMAS_READ)
            raise UnknownBundleVersion(unknown_version(f"{where}: runs[{index}]", run, found, known))
    return Comparison.from_json(document)
