"""After the load: the app's acknowledged writes looked up and its invariants run.

As dbladder checks its own workloads' writes (run/integrity.py): each value an answer
acknowledged is looked up with the request's `find` SQL (its first column counts the rows), a
value found in no row is a lost write, and each invariant must return no rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engines.base import Engine
from .requests import Requests


@dataclass(frozen=True)
class AppIntegrity:
    """What the check found, per request and per invariant."""

    acknowledged: dict[str, int]
    lost: dict[str, list[str]]
    unacknowledged: dict[str, int]  # success answers with no value to look up
    violations: dict[str, int]  # invariant name -> rows it returned

    @property
    def lost_count(self) -> int:
        return sum(len(values) for values in self.lost.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "acknowledged": sum(self.acknowledged.values()),
            "lost": self.lost_count,
            "by_request": {
                name: {
                    "acknowledged": count,
                    "lost": len(self.lost.get(name, [])),
                    "lost_values": self.lost.get(name, [])[:10],
                }
                for name, count in self.acknowledged.items()
            },
            "unacknowledged": self.unacknowledged,
            "invariant_violations": self.violations,
        }


async def read_rows(engine: Engine, declared: Requests) -> dict[str, list[Any]]:
    """Every `Param.rows` SQL's first column, read once for the run; a query with no rows is an error."""
    values: dict[str, list[Any]] = {}
    for sql in declared.row_queries():
        async with engine.read() as session:
            rows = await session.fetch_all(sql)
        if not rows:
            from .requests import RequestFileError

            raise RequestFileError(f"{declared.source}: Param.rows({sql!r}) found no rows in the app's data")
        values[sql] = [row[0] for row in rows]
    return values


async def check_writes(
    engine: Engine,
    declared: Requests,
    acknowledged: Mapping[str, Sequence[str]],
    unacknowledged: Mapping[str, int],
) -> AppIntegrity:
    """Look every acknowledged value up and run every invariant, after the app has stopped."""
    lost: dict[str, list[str]] = {}
    violations = {}
    async with engine.read() as session:
        for name, values in acknowledged.items():
            sql = declared.request(name).find
            assert sql is not None  # only requests with `find` acknowledge anything
            for value in values:
                row = await session.fetch_one(sql, (_as_number(value),))
                if row is None or not row[0]:
                    lost.setdefault(name, []).append(value)
        for invariant in declared.invariants:
            violations[invariant.name] = len(await session.fetch_all(invariant.sql))
    counts = {name: len(values) for name, values in acknowledged.items()}
    return AppIntegrity(counts, lost, dict(unacknowledged), violations)


def _as_number(value: str) -> Any:
    return int(value) if value.lstrip("-").isdigit() else value
