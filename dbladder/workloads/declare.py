"""Your own web app as a workload, in one Python file: tables, rows, SQL with `?`, and weights.

    from dbladder.workloads.declare import App, Column, Index, Param, Query, Sql, Table, Write

    workload = App(
        name="todo",
        tables=[Table("users", [Column("id", "bigint"), Column("name", "text", max_length=64)], ["id"])],
        sizes={"users": 10_000},
        rows={"users": lambda n, r: (n, r.text(2, 3))},
        operations=[
            Query("user", "GET /users/{id}", "SELECT id, name FROM users WHERE id = ?",
                  params={"id": Param.row("users")}, weight=90, one=True),
            Write("rename", "POST /users/{id}/name",
                  [Sql("UPDATE users SET name = ? WHERE id = ?", "name", "id", expect=1)],
                  params={"id": Param.row("users"), "name": Param.text(1, 3)}, weight=10),
        ],
    )

A `Query` is one SELECT run on a pooled connection; a `Write` is one transaction of `Sql`
statements, each binding its `?` to named parameters in order. A statement with `returns=("id",)`
reads its first row (an `INSERT ... RETURNING id`) and makes those values parameters of the
statements after it; one with `expect=1` must change exactly that many rows, or the whole
transaction rolls back and the request is answered 409 (the data cannot fill it). Parameters
that are not in the route come from the query string (GET) or the JSON body (other methods), and
the service checks them against their `Param` (400 with the parameter's name otherwise).

Rows are made by a function per table, called with the row number n (1, 2, ...) and `r`, a random
source that depends only on the seed, the table and n: the same rows on every engine and every
run. `r.id("users")` is a row number of another table, `r.below(k)`, `r.between(a, b)`,
`r.text(min_words, max_words)`, `r.choice(seq)`. Parameters of requests are `Param.row(table)`,
`Param.integer(low, high)`, `Param.text(min_words, max_words)` and `Param.choice(*values)`. A
table with no function starts empty.

Every SQL text is checked by the database when the workload is prepared, before any load starts,
and a statement it refuses is reported with the engine's own message, the file and the operation.

After a run with writes, dbladder checks that every acknowledged write is there: for a Write whose
statements include `INSERT INTO t ... RETURNING c` (`returns=("c",)`, c a column of t), every
value of c it answered must be in t. Writes that return nothing cannot be checked that way, and
the result says so.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engines.base import Column, Engine, Index, Row, Schema, Table
from ..errors import Conflict, InvalidRequest
from .base import Answer, Args, DataSpec, Draw, HttpRequest, Operation, Sizes, Workload, WorkloadError
from .parsing import MAX_BODY_BYTES, not_found, parse_query
from .row_checks import RowChecks
from .values import Param, RowRandom

__all__ = ["App", "Column", "Index", "Param", "Query", "Sql", "Table", "Write"]

_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE)
PRESENCE_BATCH = 500
"""Values looked up per query by the integrity check (`IN (?, ...)`)."""
# ---------------------------------------------------------------------------------------------
# Statements and operations


@dataclass(frozen=True)
class Sql:
    """One statement of a Write: SQL with `?`, the parameter names bound to them in order, and
    optionally the columns its first row returns (as new parameters) or the rows it must change."""

    text: str
    params: tuple[str, ...] = ()
    returns: tuple[str, ...] = ()
    expect: int | None = None

    def __init__(self, text: str, *params: str, returns: Sequence[str] = (), expect: int | None = None):
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "params", tuple(params))
        object.__setattr__(self, "returns", tuple(returns))
        object.__setattr__(self, "expect", expect)


@dataclass(frozen=True)
class _Declared:
    """What Query and Write have in common: a name, a route, parameters and a weight."""

    name: str
    route: str
    params: Mapping[str, Param]
    weight: float

    @property
    def method(self) -> str:
        return self.route.split(" ", 1)[0].upper() if " " in self.route else "GET"

    @property
    def path(self) -> str:
        return self.route.split(" ", 1)[1].strip() if " " in self.route else self.route

    @property
    def in_path(self) -> tuple[str, ...]:
        return tuple(
            part[1:-1] for part in self.path.split("/") if part.startswith("{") and part.endswith("}")
        )

    @property
    def outside_path(self) -> tuple[str, ...]:
        return tuple(name for name in self.params if name not in self.in_path)

    def problems(self, sizes: Sizes, used: Sequence[str]) -> list[str]:
        where = f"operation {self.name!r}"
        problems = [
            f"{where}: {p}" for name, param in self.params.items() for p in param.validate(name, sizes)
        ]
        for name in self.in_path:
            if name not in self.params:
                problems.append(f"{where}: the route names {{{name}}} but params has no {name!r}")
        for name in used:
            if name not in self.params:
                problems.append(f"{where}: a statement uses {name!r}, which is not one of its params")
        return problems

    def parse(self, request: HttpRequest) -> Args:
        values: dict[str, Any] = dict(request.params)
        if self.outside_path:
            if self.method == "GET":
                values.update(parse_query(request.query, self.outside_path))
            else:
                values.update(_json_object(request.body, self.outside_path))
        missing = [name for name in self.params if name not in values]
        if missing:
            raise InvalidRequest(f"missing {', '.join(missing)}")
        return tuple(param.check(name, values[name]) for name, param in self.params.items())

    def draw(self, draw: Draw, sizes: Sizes) -> Args:
        return tuple(param.draw(draw, sizes) for param in self.params.values())

    def render(self, args: Args) -> tuple[str, bytes | None]:
        values = dict(zip(self.params, args, strict=True))
        path = "/".join(
            str(values[part[1:-1]]) if part.startswith("{") else part for part in self.path.split("/")
        )
        outside = {name: values[name] for name in self.outside_path}
        if self.method == "GET":
            if outside:
                from urllib.parse import urlencode

                path += "?" + urlencode(outside)
            return path, None
        return path, json.dumps(outside, separators=(",", ":")).encode()


def _json_object(body: bytes, names: Sequence[str]) -> dict[str, Any]:
    if len(body) > MAX_BODY_BYTES:
        raise InvalidRequest(f"the body is larger than {MAX_BODY_BYTES} bytes")
    try:
        value = json.loads(body) if body else {}
    except ValueError as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InvalidRequest("the body must be a JSON object")
    unknown = sorted(set(value) - set(names))
    if unknown:
        raise InvalidRequest(f"unknown field {unknown[0][:40]!r}; known: {', '.join(names)}")
    return value


@dataclass(frozen=True)
class Query(_Declared):
    """One SELECT: its rows as lists (200), or with one=True its first row, or 404 when there is none."""

    sql: str = ""
    one: bool = False

    def __init__(
        self,
        name: str,
        route: str,
        sql: str,
        params: Mapping[str, Param] | None = None,
        weight: float = 1.0,
        one: bool = False,
    ):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "route", route)
        object.__setattr__(self, "params", dict(params or {}))
        object.__setattr__(self, "weight", weight)
        object.__setattr__(self, "sql", sql)
        object.__setattr__(self, "one", one)

    def operation(self, sizes: Sizes) -> tuple[Operation, list[str]]:
        problems = self.problems(sizes, ())
        if self.sql.count("?") != len(self.params):
            problems.append(
                f"operation {self.name!r}: the SQL has {self.sql.count('?')} ? but {len(self.params)} params "
                "(a Query binds its params to the ? in the order they are given)"
            )
        sql, one, name = self.sql, self.one, self.name

        async def run(engine: Engine, args: Args) -> Answer:
            async with engine.read() as session:
                if one:
                    row = await session.fetch_one(sql, args)
                    if row is None:
                        return Answer(404, not_found(f"{name}: no row for {list(args)}"))
                    return Answer(200, list(row))
                return Answer(200, [list(row) for row in await session.fetch_all(sql, args)])

        operation = Operation(
            self.name,
            self.method,
            self.path,
            False,
            self.weight,
            run,
            self.parse,
            self.draw,
            self.render,
            statements=(self.sql,),
        )
        return operation, problems


@dataclass(frozen=True)
class Write(_Declared):
    """One transaction of statements (201 with the values they returned; 409 when an `expect` fails)."""

    statements: tuple[Sql, ...] = ()

    def __init__(
        self,
        name: str,
        route: str,
        statements: Sequence[Sql | str],
        params: Mapping[str, Param] | None = None,
        weight: float = 1.0,
    ):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "route", route if " " in route else f"POST {route}")
        object.__setattr__(self, "params", dict(params or {}))
        object.__setattr__(self, "weight", weight)
        object.__setattr__(self, "statements", tuple(s if isinstance(s, Sql) else Sql(s) for s in statements))

    def operation(self, sizes: Sizes) -> tuple[Operation, list[str]]:
        available = set(self.params)
        used: list[str] = []
        problems: list[str] = []
        for number, sql in enumerate(self.statements, 1):
            if sql.text.count("?") != len(sql.params):
                problems.append(
                    f"operation {self.name!r}, statement {number}: the SQL has {sql.text.count('?')} ? but "
                    f"names {len(sql.params)} parameters"
                )
            used += [name for name in sql.params if name not in available]
            available |= set(sql.returns)
        problems = self.problems(sizes, used) + problems
        names = tuple(self.params)
        statements = self.statements

        async def run(engine: Engine, args: Args) -> Answer:
            values = dict(zip(names, args, strict=True))
            returned: dict[str, Any] = {}
            async with engine.transaction() as session:
                for sql in statements:
                    bound = tuple(values[name] for name in sql.params)
                    if sql.returns:
                        row = await session.fetch_one(sql.text, bound)
                        if row is None:
                            raise Conflict("no_row", f"{sql.text[:60]} returned no row")
                        got = dict(zip(sql.returns, row, strict=False))
                        values.update(got)
                        returned.update(got)
                    else:
                        changed = await session.execute(sql.text, bound)
                        if sql.expect is not None and changed != sql.expect:
                            raise Conflict(
                                "no_match", f"{sql.text[:60]} changed {changed} rows, not {sql.expect}"
                            )
            return Answer(201, returned)

        def acknowledge(args: Args, body: Any) -> tuple[Any, ...]:
            return tuple(body.values()) if isinstance(body, dict) else ()

        operation = Operation(
            self.name,
            self.method,
            self.path,
            True,
            self.weight,
            run,
            self.parse,
            self.draw,
            self.render,
            statements=tuple(sql.text for sql in self.statements),
            acknowledge=acknowledge,
        )
        return operation, problems

    def presence_check(self, tables: Mapping[str, Table]) -> tuple[str, str, int] | None:
        """(table, column, position in the acknowledged record) of the first value this write
        returns from an `INSERT INTO table ... RETURNING column`, column one of the table's; None
        when it returns none (its writes cannot be looked up after the run)."""
        names = list(dict.fromkeys(name for sql in self.statements for name in sql.returns))
        for sql in self.statements:
            match = _INSERT_INTO.match(sql.text)
            table = tables.get(match.group(1)) if match else None
            if table is None:
                continue
            for name in sql.returns:
                if name in table.column_names:
                    return table.name, name, names.index(name)
        return None


# ---------------------------------------------------------------------------------------------
# The app


RowFunction = Callable[[int, RowRandom], Sequence[Any]]
ROWS_PER_CHUNK = 5_000


class App(Workload):
    """A workload declared with tables, row functions, sizes and operations; see the module notes."""

    def __init__(
        self,
        name: str,
        tables: Sequence[Table],
        operations: Sequence[Query | Write],
        sizes: Mapping[str, int] | None = None,
        rows: Mapping[str, RowFunction] | None = None,
        indexes: Sequence[Index] = (),
        description: str = "",
    ):
        self.name = name
        self.description = description
        self.schema = Schema(tables=tuple(_table(t) for t in tables), indexes=tuple(indexes))
        self.sizes = dict(sizes or {})
        self.rows = dict(rows or {})
        built = [declared.operation(self.sizes) for declared in operations]
        by_name = {table.name: table for table in self.schema.tables}
        self._presence = {
            declared.name: declared.presence_check(by_name)
            for declared in operations
            if isinstance(declared, Write)
        }
        self.operations = tuple(operation for operation, _ in built)
        self._problems = [problem for _, problems in built for problem in problems]
        tables_by_name = {table.name for table in self.schema.tables}
        for table in self.rows:
            if table not in tables_by_name:
                self._problems.append(f"rows names {table!r}, which is not one of the tables")
            elif table not in self.sizes:
                self._problems.append(f"rows has a function for {table!r} but sizes gives it no row count")
        for table, function in self.rows.items():
            if not callable(function):
                self._problems.append(f"rows[{table!r}] must be a function (n, r) -> row")

    def validate(self) -> list[str]:
        return self._problems + super().validate()

    def planned_rows(self, sizes: Sizes) -> dict[str, int]:
        return {
            table.name: int(sizes.get(table.name, 0)) if table.name in self.rows else 0
            for table in self.schema.tables
        }

    async def verify(
        self,
        engine: Engine,
        data: DataSpec,
        acknowledged: Mapping[str, Sequence[tuple[Any, ...]]],
        before: Any = None,
    ) -> dict[str, Any]:
        """Every value an acknowledged write returned from an INSERT is in its table (see the module
        notes); writes that return nothing are counted as not checked."""
        checked = lost = 0
        lost_values: list[Any] = []
        unchecked = []
        for name, records in acknowledged.items():
            check = self._presence.get(name)
            if check is None:
                if records:
                    unchecked.append(name)
                continue
            table, column, position = check
            wanted = [record[position] for record in records if len(record) > position]
            checked += len(wanted)
            found: set[Any] = set()
            distinct = list(dict.fromkeys(wanted))
            async with engine.read() as session:
                for start in range(0, len(distinct), PRESENCE_BATCH):
                    batch = distinct[start : start + PRESENCE_BATCH]
                    marks = ", ".join("?" * len(batch))
                    sql = f"SELECT {column} FROM {table} WHERE {column} IN ({marks})"
                    found.update(row[0] for row in await session.fetch_all(sql, tuple(batch)))
            missing = [value for value in wanted if value not in found]
            lost += len(missing)
            lost_values += missing[:10]
        what = "every value an acknowledged write returned from an INSERT ... RETURNING is in its table"
        if unchecked:
            what += f"; not checked (they return nothing to look up): {', '.join(unchecked)}"
        return {
            "checked": bool(checked) or not unchecked,
            "acknowledged": sum(len(records) for records in acknowledged.values()),
            "present": checked - lost,
            "lost": lost,
            "corrupted": 0,
            "lost_ids": lost_values[:10],
            "violations": [],
            "what": what,
        }

    def generate(self, data: DataSpec) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
        for number, table in enumerate(self.schema.tables, 1):
            function = self.rows.get(table.name)
            if function is None:
                continue
            yield table, self._chunks(function, number, table, data)

    def _chunks(
        self, function: RowFunction, number: int, table: Table, data: DataSpec
    ) -> Iterator[list[Row]]:
        count, width = data.sizes[table.name], len(table.columns)
        unique = [
            index.columns for index in self.schema.indexes if index.unique and index.table == table.name
        ]
        where = f"{self.source or self.name}: rows[{table.name!r}]"
        checks = RowChecks(where, table, count, unique)
        for start in range(1, count + 1, ROWS_PER_CHUNK):
            chunk = []
            for n in range(start, min(start + ROWS_PER_CHUNK, count + 1)):
                try:
                    row = tuple(function(n, RowRandom(data.seed, number, n, data.sizes)))
                except Exception as exc:
                    raise WorkloadError(f"{where} failed for row {n}: {type(exc).__name__}: {exc}") from None
                if len(row) != width:
                    raise WorkloadError(
                        f"{where} gave {len(row)} values for row {n}; "
                        f"the table has {width} columns ({', '.join(table.column_names)})"
                    )
                checks.check(n, row)
                chunk.append(row)
            yield chunk


def _table(table: Table) -> Table:
    """Accept lists where the schema wants tuples, so a user file can write plain lists."""
    return dataclasses.replace(table, columns=tuple(table.columns), primary_key=tuple(table.primary_key))
