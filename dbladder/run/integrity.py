"""Nothing lost: after a run with writes, every write the database acknowledged must still be there.

    before = take_baseline(url, workload)                 # before the load: workload.before_writes
    ... the load; the generator keeps a compact record of every write answered 2xx ...
    report = check_integrity(url, workload, data, acknowledged, before, engine_info, faults)
    raise_if_lost(result.integrity)                       # WritesLost, exit code 4 (the typed section)

The workload decides what "present and intact" means and which invariants must hold
(`Workload.verify`; the shop: `workloads/shop/integrity.py`). This module times the check, adds
the writes whose answer could not be read, and says what the engine's durability settings mean
for the faults the run injected: where a setting lets a commit be acknowledged before it is on
disk, a process kill may or may not lose it depending on where the data waited (the kernel's page
cache survives a process, not the machine), and the report says which, rather than guess.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engines import opened
from ..engines.base import EngineInfo, EngineOptions
from ..engines.dialect import dialect_of
from ..errors import DbladderError, UnknownEngine
from ..load.acknowledged import AcknowledgedWrites
from ..report.integrity import integrity_line
from ..result.run import Integrity, RunResult
from ..urls import DatabaseURL
from ..workloads.base import DataSpec, Workload

EXIT_WRITES_LOST = 4


class WritesLost(DbladderError):
    """Writes the database acknowledged are missing or changed after the run (exit code 4)."""

    exit_code = EXIT_WRITES_LOST


class IntegrityCheckFailed(DbladderError):
    """The integrity check could not run (the database did not answer after the run)."""


def take_baseline(db_url: str | DatabaseURL, workload: Workload) -> Any:
    """What the workload's check needs to know before the load (`Workload.before_writes`)."""

    async def run() -> Any:
        async with opened(db_url, EngineOptions(pool_size=1)) as engine:
            return await workload.before_writes(engine)

    return asyncio.run(run())


def check_integrity(
    db_url: str | DatabaseURL,
    workload: Workload,
    data: DataSpec,
    acknowledged: AcknowledgedWrites,
    before: Any = None,
    engine: EngineInfo | None = None,
    faults: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The integrity section of a result: the workload's verdict, with `seconds` (how long the check
    took), `unreadable` (2xx answers that did not say what was written), `passed` (nothing lost or
    corrupted) and `durability` (what the engine's settings and the run's faults could lose).

    IntegrityCheckFailed if the database cannot be read.
    """
    began = time.perf_counter()

    async def run() -> dict[str, Any]:
        async with opened(db_url, EngineOptions(pool_size=1, pool_timeout=60.0)) as opened_engine:
            return await workload.verify(opened_engine, data, acknowledged.by_operation(), before)

    try:
        verdict = asyncio.run(run())
    except DbladderError as exc:
        raise IntegrityCheckFailed(f"the integrity check could not read the database: {exc}") from None
    report: dict[str, Any] = {
        "checked": bool(verdict.get("checked")),
        "acknowledged": int(verdict.get("acknowledged") or 0) + acknowledged.unreadable,
        "present": verdict.get("present"),
        "lost": int(verdict.get("lost") or 0),
        "corrupted": int(verdict.get("corrupted") or 0),
        "unreadable": acknowledged.unreadable,
        "violations": list(verdict.get("violations") or []),
        "seconds": round(time.perf_counter() - began, 3),
        "what": verdict.get("what", ""),
    }
    report["passed"] = report["lost"] == 0 and report["corrupted"] == 0 and not report["violations"]
    for key in ("lost_ids", "corrupted_ids", "unacknowledged_present", "invariants", "rows_read"):
        if key in verdict:
            report[key] = verdict[key]
    if engine is not None:
        report["durability"] = durability_note(engine, faults)
    return report


@dataclass(frozen=True)
class IntegrityChecked:
    """A run's integrity check as it went: the result's section, the flags it adds to the run (a
    database that could not be read), and the failure of the machine that was to check, which
    the round raises once its result is written (None: it checked)."""

    section: dict[str, Any]
    flags: tuple[str, ...] = ()
    failure: DbladderError | None = None


def integrity_section(
    db_url: str | DatabaseURL,
    workload: Workload,
    data: DataSpec,
    acknowledged: AcknowledgedWrites,
    before: Any,
    engine: EngineInfo,
    faults: Sequence[Mapping[str, Any]] = (),
) -> IntegrityChecked:
    """`check_integrity` for a run's result, with the run's `faults`; when the database cannot be
    read, a section that says so, and a flag."""
    try:
        return IntegrityChecked(check_integrity(db_url, workload, data, acknowledged, before, engine, faults))
    except IntegrityCheckFailed as exc:
        return IntegrityChecked(
            not_checked(str(exc), acknowledged.count + acknowledged.unreadable), (str(exc),)
        )


def not_checked(reason: str, acknowledged: int) -> dict[str, Any]:
    """The integrity section of a run whose check could not run."""
    return {
        "checked": False,
        "acknowledged": acknowledged,
        "present": None,
        "lost": 0,
        "corrupted": 0,
        "unreadable": 0,
        "violations": [],
        "seconds": 0.0,
        "what": reason,
        "passed": False,
    }


def raise_if_lost(section: Integrity | None) -> None:
    """WritesLost (exit 4) when the integrity check (a result's section) found acknowledged writes
    lost or corrupted."""
    if section is not None and (section.lost or section.corrupted):
        raise WritesLost(integrity_line(section))


def raise_if_any_lost(runs: Sequence[RunResult]) -> None:
    """WritesLost (exit 4) naming every run of a comparison whose check found writes lost or
    corrupted (each by its label and number)."""
    lost = [
        f"{run.label} run {run.run}: {integrity_line(section)}"
        for run in runs
        if (section := run.integrity) is not None and (section.lost or section.corrupted)
    ]
    if lost:
        raise WritesLost("; ".join(lost))


# What a kill -9 of the process that holds the data can lose, by setting, is each engine's dialect's
# to say (`engines.dialect.Durability`), and which faults stop that process. A process kill
# leaves the kernel's page cache alone: data handed to the kernel (write()) survives it even
# without fsync; only data still in the process's own memory is lost. A crash of the machine or
# a power cut would lose what was not fsynced too; dbladder never causes one.
def durability_note(engine: EngineInfo, faults: Sequence[Mapping[str, Any]] = ()) -> str:
    """One or two sentences: what the engine's durability settings promise, and what the faults of
    this run (if any) could therefore have lost."""
    kinds = [str(fault.get("kind")) for fault in faults]
    try:
        dialect = dialect_of(engine.engine)
    except UnknownEngine:
        return engine.durability_note
    promised = dialect.durability(engine)
    promise, loses, holders = promised.promise, promised.loses, dialect.data_holders
    if any(kind in holders for kind in kinds):
        return f"{promise}: {loses}. This run injected {', '.join(kinds)}."
    if kinds:
        return (
            f"{promise}: {loses}. This run's faults ({', '.join(kinds)}) did not stop the process that "
            "holds the data."
        )
    return f"{promise}: {loses}. This run injected no fault: the check shows what the load alone left."
