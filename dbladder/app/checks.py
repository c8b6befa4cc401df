"""The request file's SQL on the app's data: every query tried before the app starts, and after
the load the app's acknowledged writes looked up and its invariants run.

    rows = await check_queries(engine, declared)   # after --app-setup: RequestFileError, exit 2
    found = await check_writes(engine, declared, acknowledged, {})   # after the load

Before the app starts, each `Param.rows` query is read (its values go to the load), each `find`
is run with NULL for its one `?` and each invariant is run, so that a typo in any of them is a
line naming the request or invariant and the SQL, not a driver's traceback after minutes of load.
After the load, as dbladder checks its own workloads' writes (run/integrity.py): each value an
answer acknowledged is looked up with the request's `find` SQL (its first column counts the
rows), a value found in no row is a lost write, and each invariant must return no rows; a query
that fails then (the app dropped a table during the run) is AppQueryFailed, which the round
flags as a check that could not run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine_registry import engine_kind
from ..engines.base import Engine
from ..errors import DbladderError
from ..types import SqlParams
from .errors import AppQueryFailed
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
TRIED_WHEN = "tried after --app-setup, before the app starts"
FIND_WHEN = f"it looks each acknowledged write up after the load; {TRIED_WHEN}"
INVARIANT_WHEN = f"it must return no rows after the load; {TRIED_WHEN}"


async def check_queries(engine: Engine, declared: Requests) -> dict[str, list[Any]]:
    """Every query of the request file tried on the app's data as its setup left it, before the
    app starts: each `Param.rows` query read once, its values returned (the first column, NULLs
    left out, a value JSON cannot carry, a UUID, a Decimal, a date, as its text), each `find` run
    once with NULL for its `?`, and each invariant run once.

    RequestFileError (exit 2) with every problem at once, a line naming the request or the
    invariant and the SQL: a query the engine refuses (a table the setup has not made, a wrong
    column, two statements), one that fails when run (a `find` whose `?` is not the one
    placeholder the engine sees, an invariant with one), a `Param.rows` query that finds no rows."""
    finds = [(request.name, request.find) for request in declared.requests if request.find is not None]
    invariants = [(invariant.name, invariant.sql) for invariant in declared.invariants]
    texts = [*declared.row_queries(), *(sql for _, sql in finds), *(sql for _, sql in invariants)]
    label = engine_kind(engine.name).label
    refused = {problem.statement: problem.message for problem in await engine.check_statements(texts)}
    values, lines = await _read_rows(engine, declared, label, refused)
    for request, sql in finds:
        problem = await _tried(engine, label, refused, sql, 1)
        if problem:
            lines.append(f"{declared.source}: the request {request!r}: find={sql!r}: {problem} ({FIND_WHEN})")
    for name, sql in invariants:
        problem = await _tried(engine, label, refused, sql, 0)
        if problem:
            lines.append(f"{declared.source}: the invariant {name!r}: {sql!r}: {problem} ({INVARIANT_WHEN})")
    if lines:
        raise RequestFileError("\n".join(lines))
    return values


async def _read_rows(
    engine: Engine, declared: Requests, label: str, refused: Mapping[str, str]
) -> tuple[dict[str, list[Any]], list[str]]:
    """The values of each `Param.rows` query the engine did not refuse, and a line per request
    that uses a query with a problem."""
    queries = declared.row_queries()
    problems = {sql: f": {label} refuses it: {refused[sql]}" for sql in queries if sql in refused}
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
    uses = dict.fromkeys((request, sql) for request, _, sql in declared.row_params() if sql in problems)
    lines = [
        f"{declared.source}: the request {request!r}: Param.rows({sql!r}){problems[sql]} ({ROWS_READ_WHEN})"
        for request, sql in uses
    ]
    return values, lines


# A query the engine runs with the other number of values than it was given: its placeholders
# are not what the file says, in the engine's own count.
MISCOUNTED = {
    1: "{label} sees no placeholder in it: its ? is inside quotes or a comment",
    0: "{label} sees a placeholder in it, and an invariant is run without values",
}


async def _tried(engine: Engine, label: str, refused: Mapping[str, str], sql: str, values: int) -> str | None:
    """What is wrong with `sql`: the engine refused to prepare it, or failed running it once with
    `values` NULLs (a `find`: one, for its ?; an invariant: none); None when it ran."""
    if sql in refused:
        return f"{label} refuses it: {refused[sql]}"
    failure = await _failure(engine, sql, (None,) * values)
    if failure is None:
        return None
    if await _failure(engine, sql, (None,) * (1 - values)) is None:
        return MISCOUNTED[values].format(label=label)
    return f"{label} failed running it{' with NULL for its ?' if values else ''}: {failure}"


async def _failure(engine: Engine, sql: str, params: SqlParams) -> str | None:
    """The first line of the driver's error running `sql` once with `params`, or None when it ran."""
    try:
        async with engine.read() as session:
            await session.fetch_all(sql, params)
    except DbladderError:  # the database gone, a pool timeout: not the file's mistake
        raise
    except Exception as exc:  # the driver's own error (apsw, asyncpg, asyncmy): the query's
        return _first_line(exc)
    return None


def _plain(value: Any) -> Any:
    """A value as the state file (JSON) and a template carry it."""
    return value if isinstance(value, (int, float, str)) else str(value)


def _first_line(exc: BaseException) -> str:
    """The driver's message, its first line: a MySQL driver's (code, message) by its message."""
    args = exc.args
    text = args[1] if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str) else str(exc)
    lines = text.strip().splitlines()
    return lines[0] if lines else type(exc).__name__


async def check_writes(
    engine: Engine,
    declared: Requests,
    acknowledged: Mapping[str, Sequence[str]],
    unacknowledged: Mapping[str, int],
) -> AppIntegrity:
    """Look every acknowledged value up and run every invariant, after the app has stopped.

    AppQueryFailed, naming the request or invariant and the SQL, for a query that fails now
    although it ran before the load (the app dropped or changed a table during the run)."""
    label = engine_kind(engine.name).label
    lost: dict[str, list[str]] = {}
    violations = {}
    async with engine.read() as session:
        for name, values in acknowledged.items():
            sql = declared.request(name).find
            assert sql is not None  # only requests with `find` acknowledge anything
            # A value the request sent is text, however it reads; an id from the answer may be a number.
            sent = declared.request(name).sent_param is not None
            for value in values:
                try:
                    row = await session.fetch_one(sql, (value if sent else _as_number(value),))
                except DbladderError:
                    raise
                except Exception as exc:  # the driver's own error: the query's, after the load
                    raise _failed_after(f"the request {name!r}: find={sql!r}", label, exc) from None
                if row is None or not row[0]:
                    lost.setdefault(name, []).append(value)
        for invariant in declared.invariants:
            try:
                violations[invariant.name] = len(await session.fetch_all(invariant.sql))
            except DbladderError:
                raise
            except Exception as exc:
                what = f"the invariant {invariant.name!r}: {invariant.sql!r}"
                raise _failed_after(what, label, exc) from None
    counts = {name: len(values) for name, values in acknowledged.items()}
    return AppIntegrity(counts, lost, dict(unacknowledged), violations)


def _failed_after(what: str, label: str, exc: BaseException) -> AppQueryFailed:
    return AppQueryFailed(f"{what} failed after the load: {label}: {_first_line(exc)}")


def _as_number(value: str) -> Any:
    return int(value) if value.lstrip("-").isdigit() else value
