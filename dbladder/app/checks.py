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
from ..errors import DbladderError
from ..urls import engine_kind
from .requests import RequestFileError, Requests


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


ROWS_READ_WHEN = "it reads the app's data after --app-setup, before the app starts"


async def read_rows(engine: Engine, declared: Requests) -> dict[str, list[Any]]:
    """Every `Param.rows` SQL's first column, each query read once, NULLs left out and a value
    JSON cannot carry (a UUID, a Decimal, a date) as its text.

    RequestFileError (exit 2) with every problem at once, a line per request that uses the query:
    a query the engine refuses (a table the app's setup has not made, a wrong column), one that
    fails when run, one that finds no rows."""
    queries = declared.row_queries()
    label = engine_kind(engine.name).label
    problems = {
        problem.statement: f": {label} refuses it: {problem.message}"
        for problem in await engine.check_statements(queries)
    }
    values: dict[str, list[Any]] = {}
    for sql in queries:
        if sql in problems:
            continue
        try:
            async with engine.read() as session:
                rows = await session.fetch_all(sql)
        except DbladderError:  # the database gone, a pool timeout: not the file's mistake
            raise
        except Exception as exc:  # the driver's own error (apsw, asyncpg, PyMySQL): the query's
            problems[sql] = f": {label} failed running it: {_first_line(exc)}"
            continue
        values[sql] = [_plain(row[0]) for row in rows if row[0] is not None]
        if not values[sql]:
            problems[sql] = " found no rows"
    if problems:
        uses = dict.fromkeys((request, sql) for request, _, sql in declared.row_params() if sql in problems)
        raise RequestFileError(
            "\n".join(
                f"{declared.source}: the request {request!r}: Param.rows({sql!r}){problems[sql]} "
                f"({ROWS_READ_WHEN})"
                for request, sql in uses
            )
        )
    return values


def _plain(value: Any) -> Any:
    """A value as the state file (JSON) and a template carry it."""
    return value if isinstance(value, (int, float, str)) else str(value)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


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
            # A value the request sent is text, however it reads; an id from the answer may be a number.
            sent = declared.request(name).sent_param is not None
            for value in values:
                row = await session.fetch_one(sql, (value if sent else _as_number(value),))
                if row is None or not row[0]:
                    lost.setdefault(name, []).append(value)
        for invariant in declared.invariants:
            violations[invariant.name] = len(await session.fetch_all(invariant.sql))
    counts = {name: len(values) for name, values in acknowledged.items()}
    return AppIntegrity(counts, lost, dict(unacknowledged), violations)


def _as_number(value: str) -> Any:
    return int(value) if value.lstrip("-").isdigit() else value
