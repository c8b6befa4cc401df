"""The workload interface: everything dbladder needs to know about one web app, and nothing more.

A workload owns its schema, a deterministic data set, its operations (the SQL each runs, its HTTP
route, how its input is checked, how the load generator draws and sends one), its request mix and
presets, and a check of what must hold in its data. The load generator, the direct target, the
web service, seeding and fresh data, the reports and the CLI see only this interface; nothing
outside a workload's own package imports it (tests/test_layout.py checks).

    workload.schema, workload.generate(seed, sizes)     -> data/ seeds any engine with it
    workload.operations[i].parse / run                   -> service/ mounts the routes
    workload.operations[i].draw / render, workload.mix() -> load/ sends requests
    workload.open(engine) -> context                     -> what operations run with
    workload.before_writes(engine), workload.verify(engine, data, acknowledged, before)
                                                         -> the integrity check after a run

An operation runs with a *context*, not a connection: the built-in workloads use dbladder's own
Engine (`async with engine.read() as session`), and a workload with a data layer of its own (an
ORM) builds that layer in `open()` and counts its own queries.

A user's workload is usually written with `dbladder.workloads.declare` (tables, SQL with `?`,
weights); this module is what that builds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..engines.base import Engine, Row, Schema, Table
from ..errors import InvalidConfig, UsageError
from ..types import Args, QueryCounts, Sizes

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
MAX_ROWS_PER_TABLE = 2_000_000_000
_ROUTE_PART = re.compile(r"^(?:[A-Za-z0-9._~!$&'()*+,;=:@-]+|\{[A-Za-z_][A-Za-z0-9_]*\})$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class Answer(NamedTuple):
    """What an operation gives back: an HTTP status and a JSON-encodable body."""

    status: int
    body: Any = None


class WorkloadError(UsageError):
    """A workload that cannot be loaded or is not valid; the message names it and what is wrong."""


@dataclass(frozen=True)
class HttpRequest:
    """What a route's parser sees: the path parameters of its pattern, the query string, the body."""

    params: Mapping[str, str]
    query: str = ""
    body: bytes = b""


class Draw:
    """The generator's random source for one process: reproducible, fast, the same on every platform.

    Only random.Random.random() is used, whose sequence the random module guarantees for a given
    seed; whole numbers are scaled from it with plain arithmetic (half the cost of randrange, and
    uniform to within n / 2**53 for n < 2**53).
    """

    __slots__ = ("random",)

    def __init__(self, random: Callable[[], float]):
        self.random = random

    def below(self, n: int) -> int:
        """A whole number from 0 to n - 1."""
        return int(self.random() * n)

    def id(self, n: int) -> int:
        """A whole number from 1 to n: an id of a seeded row."""
        return int(self.random() * n) + 1


Run = Callable[[Any, Args], Awaitable[Answer]]
Parse = Callable[[HttpRequest], Args]
DrawArgs = Callable[[Draw, Sizes], Args]
Render = Callable[[Args], "tuple[str, bytes | None]"]
Acknowledge = Callable[[Args, Any], "tuple[Any, ...]"]


@dataclass(frozen=True)
class Operation:
    """One kind of request: its route, its SQL, and how it is run, checked, drawn and sent.

    run(context, args)  does the work and returns an Answer; raises Conflict for a 409 (inside a
                        transaction, so it rolls back), errors.InvalidRequest for a 400.
    parse(request)      the args of an HTTP request, or errors.InvalidRequest (400) naming the field.
    draw(draw, sizes)   the args of one generated request against a data set of these sizes.
    render(args)        (path with query string, JSON body or None): the request the generator sends.
    acknowledge(args, body)  for a write: the compact record of what the database promised to keep
                        (the shop: the order id and its total), kept by the generator for the
                        integrity check; body is the decoded answer.
    statements          every SQL text the operation may run, with `?` placeholders, so every engine
                        can check and prepare them before the load starts.
    """

    name: str
    method: str
    route: str
    write: bool
    weight: float
    run: Run
    parse: Parse
    draw: DrawArgs
    render: Render
    statements: tuple[str, ...] = ()
    acknowledge: Acknowledge | None = None
    description: str = ""

    @property
    def route_params(self) -> tuple[str, ...]:
        """The names of the route's path parameters, in order: "/u/{handle}" -> ("handle",)."""
        return tuple(part[1:-1] for part in self.route.split("/") if part.startswith("{"))

    def validate(self) -> list[str]:
        """Every problem with this operation's declaration, each naming it."""
        where = f"operation {self.name!r}"
        problems = []
        if not _NAME.match(self.name or ""):
            problems.append(f"{where}: the name must be lower case letters, digits and _ (a-z first)")
        if self.method not in METHODS:
            problems.append(f"{where}: method must be one of {', '.join(METHODS)}, not {self.method!r}")
        if not self.route.startswith("/") or self.route in ("/healthz", "/stats"):
            problems.append(f"{where}: route must start with / and not be /healthz or /stats: {self.route!r}")
        elif not all(_ROUTE_PART.match(part) for part in self.route.strip("/").split("/") if part):
            problems.append(
                f"{where}: route {self.route!r} must be path segments and {{name}} parameters only"
            )
        elif len(set(self.route_params)) != len(self.route_params):
            problems.append(f"{where}: route {self.route!r} names a parameter twice")
        if not (_is_number(self.weight) and self.weight >= 0):
            problems.append(f"{where}: weight must be a number, 0 or more, not {self.weight!r}")
        for name in ("run", "parse", "draw", "render"):
            if not callable(getattr(self, name)):
                problems.append(f"{where}: {name} must be callable")
        if self.acknowledge is not None and not callable(self.acknowledge):
            problems.append(f"{where}: acknowledge must be callable or None")
        for sql in self.statements:
            if not isinstance(sql, str) or not sql.strip():
                problems.append(f"{where}: every statement must be SQL text, not {sql!r}")
        return problems


@dataclass(frozen=True)
class DataSpec:
    """Which data set: the seed (the same number gives byte-identical rows on every engine) and sizes."""

    seed: int
    sizes: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "sizes": dict(self.sizes)}


@dataclass(frozen=True)
class Mix:
    """Which operations a load sends, by weight: {operation name: weight}, normalised when used."""

    weights: Mapping[str, float]

    @property
    def total(self) -> float:
        return float(sum(self.weights.values()))

    def share(self, name: str) -> float:
        """The share of requests that are operation `name` (0 to 1)."""
        total = self.total
        return self.weights.get(name, 0.0) / total if total else 0.0

    def to_dict(self) -> dict[str, float]:
        total = self.total
        return {name: round(weight / total, 6) for name, weight in self.weights.items() if weight > 0}


class Workload:
    """A web app as dbladder sees it. Subclass it (the built-in workloads do) or build one with
    `dbladder.workloads.declare.App`.

    Subclasses set the class attributes and implement `generate`; the other methods have defaults
    that fit a workload whose size parameters are row counts of tables of the same name.
    """

    name: str = ""
    description: str = ""
    schema: Schema = Schema(tables=())
    sizes: Mapping[str, int] = {}
    """The size parameters at scale 1, e.g. {"products": 100_000, "orders": 1_000_000}."""
    operations: tuple[Operation, ...] = ()
    presets: Mapping[str, Any] = {}
    """Named rounds of this workload (dbladder.plans.Preset), beside the generic ones."""
    default_preset: str | None = None
    source: str = ""
    """Where the workload came from: "built-in", a file path, "module:attr" or an entry point."""

    # -- data --------------------------------------------------------------------------------

    def generate(self, data: DataSpec) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
        """(table, chunks of rows in the table's column order) for every table, in load order.

        Rows depend on the seed and the sizes alone: any engine gets byte-identical rows.
        """
        raise NotImplementedError

    def planned_rows(self, sizes: Sizes) -> dict[str, int]:
        """Rows per table a data set of these sizes holds (for progress bars)."""
        return {table.name: int(sizes.get(table.name, 0)) for table in self.schema.tables}

    def scaled_sizes(self, scale: float = 1.0, overrides: Mapping[str, int] | None = None) -> dict[str, int]:
        """The default sizes times `scale` (at least 1 each), with `overrides` set as given."""
        sizes = {name: max(1, round(value * scale)) for name, value in self.sizes.items()}
        sizes.update(overrides or {})
        return sizes

    def validate_sizes(self, sizes: Sizes) -> list[str]:
        """Every problem with a set of size parameters, each naming it."""
        problems = []
        unknown = sorted(set(sizes) - set(self.sizes))
        if unknown:
            problems.append(
                f"{self.name} has no size {', '.join(unknown)}; its sizes are {', '.join(self.sizes)}"
            )
        for name, value in sizes.items():
            if not (
                isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ROWS_PER_TABLE
            ):
                problems.append(
                    f"size {name} must be a whole number from 1 to {MAX_ROWS_PER_TABLE:,}, not {value!r}"
                )
        return problems

    async def sizes_in(self, engine: Engine) -> dict[str, int]:
        """The size parameters of the data already in a database (for a run without seeding).

        Raises NotSeeded when a table is missing or empty. The default counts the rows of each
        table named like a size parameter.
        """
        from ..errors import NotSeeded

        for table in self.schema.tables:
            if not await engine.table_exists(table.name):
                raise NotSeeded(
                    f"{engine.url.redacted} has no {table.name} table of the {self.name} workload; "
                    "seed it first (dbladder seed) or run without --no-seed"
                )
        sizes = {}
        async with engine.read() as session:
            for name in self.sizes:
                row = await session.fetch_one(f"SELECT count(*) FROM {name}")
                sizes[name] = int(row[0]) if row else 0
        empty = [name for name, count in sizes.items() if count < 1]
        if empty:
            raise NotSeeded(f"{engine.url.redacted} has no rows in {', '.join(empty)}; seed it first")
        return sizes

    # -- running -----------------------------------------------------------------------------

    async def open(self, engine: Engine) -> Any:
        """The context operations run with, on an open engine. The default is the engine itself."""
        return engine

    async def close(self, context: Any) -> None:
        """Release what `open` made (the engine itself is closed by its owner)."""

    def query_counts(self, context: Any) -> QueryCounts | None:
        """What the operations sent to the database so far through this context, if the workload
        counts it (an ORM does): {operation: {"requests": n, "statements": n, "round_trips": n,
        ...}}, cumulative, so a level's figures are the difference of two snapshots. None (the
        default): not counted; the built-in SQL workloads send exactly their `statements`.
        """
        return None

    def http_renderer(self, host: str) -> Callable[[tuple[int, Args]], bytes] | None:
        """A function rendering (operation index, args) to a whole HTTP/1.1 request for `host`, for a
        workload whose requests carry more than a path and a JSON body (the user's app: cookies,
        forms, CSRF headers); None (the default): the load's client renders `render`'s path and body."""
        return None

    def wrap_target(self, target: Any, store: Any) -> Any | None:
        """The load's target wrapped by the workload itself, filing what it acknowledges in `store`
        (an AcknowledgedWrites), or None (the default: the load's own AcknowledgingTarget does it)."""
        return None

    def data_layer(self, engine: str) -> dict[str, str] | None:
        """How the operations reach an engine when it is not through dbladder's own engine (an ORM
        and its driver), for the result's record; None: through dbladder's engine."""
        return None

    def operation(self, name: str) -> Operation:
        """The operation called `name`; UsageError naming the known ones otherwise."""
        for operation in self.operations:
            if operation.name == name:
                return operation
        known = ", ".join(op.name for op in self.operations)
        raise UsageError(f"the {self.name} workload has no operation {name!r}; its operations: {known}")

    @property
    def statements(self) -> tuple[tuple[str, str], ...]:
        """(operation name, SQL) for every statement of every operation, to check before a load."""
        return tuple((op.name, sql) for op in self.operations for sql in op.statements)

    async def check_sql(self, engine: Engine) -> None:
        """Every SQL text of the operations prepared on this engine, none run; WorkloadError naming the
        workload, the operation, the statement and the engine's own message for each one it refuses.
        Run it once the tables exist: a statement about a missing table is refused.
        """
        statements = self.statements
        problems = await engine.check_statements([sql for _, sql in statements])
        if not problems:
            return
        operation_of = {sql: name for name, sql in reversed(statements)}
        lines = [
            f"operation {operation_of.get(problem.statement, '?')}: {_short(problem.statement)}: "
            f"{problem.message}"
            for problem in problems
        ]
        raise WorkloadError(
            f"{self.source or self.name}: {engine.name} refuses {len(lines)} statement(s) of the "
            f"{self.name} workload:\n  - " + "\n  - ".join(lines)
        )

    def mix(self, write_share: float | None = None, weights: Mapping[str, float] | None = None) -> Mix:
        """The request mix: the operations' own weights, or `weights` by name; then, with
        `write_share`, the writes rescaled to that share of all requests and the reads to the rest,
        each keeping their weights relative to one another.

        Raises InvalidConfig for an unknown name, a share outside 0..1, or a share the operations
        cannot give (writes wanted but the workload has none, or reads wanted and it has none).
        """
        problems = []
        chosen = {op.name: op.weight for op in self.operations}
        if weights is not None:
            unknown = sorted(set(weights) - set(chosen))
            if unknown:
                problems.append(
                    f"the {self.name} workload has no operation {', '.join(unknown)}; "
                    f"its operations: {', '.join(chosen)}"
                )
            chosen = {name: float(weights.get(name, 0.0)) for name in chosen}
            for name, weight in chosen.items():
                if not (_is_number(weight) and weight >= 0):
                    problems.append(f"weight of {name} must be a number, 0 or more, not {weight!r}")
        if write_share is not None:
            if not (_is_number(write_share) and 0 <= write_share <= 1):
                problems.append(f"write share must be a number from 0 to 1, not {write_share!r}")
            else:
                writes = {op.name for op in self.operations if op.write}
                write_total = sum(w for name, w in chosen.items() if name in writes)
                read_total = sum(w for name, w in chosen.items() if name not in writes)
                if write_share > 0 and write_total <= 0:
                    problems.append(f"a write share of {write_share:g} needs a write operation with a weight")
                if write_share < 1 and read_total <= 0:
                    problems.append(f"a write share of {write_share:g} needs a read operation with a weight")
                if not problems:
                    chosen = {
                        name: (
                            write_share * w / write_total
                            if name in writes
                            else (1 - write_share) * w / read_total
                        )
                        if (write_total if name in writes else read_total) > 0
                        else 0.0
                        for name, w in chosen.items()
                    }
        if not problems and not sum(chosen.values()) > 0:
            problems.append("the mix must give at least one operation a weight above 0")
        if problems:
            raise InvalidConfig(problems)
        return Mix(chosen)

    def write_share(self, mix: Mix) -> float:
        """The share of a mix's requests that are writes."""
        return sum(mix.share(op.name) for op in self.operations if op.write)

    # -- integrity ---------------------------------------------------------------------------

    async def before_writes(self, engine: Engine) -> Any:
        """Before the load: what `verify` will need to know about the data as it was (the shop: the
        last order id and any stock not at its initial value). Plain, small data; None by default."""
        return None

    async def verify(
        self,
        engine: Engine,
        data: DataSpec,
        acknowledged: Mapping[str, Sequence[tuple[Any, ...]]],
        before: Any = None,
    ) -> dict[str, Any]:
        """After a run: is every acknowledged write present and intact, and do the invariants hold?

        `acknowledged` maps each write operation to the records its `acknowledge` made; `before` is
        what `before_writes` returned before the load. Returns {"checked": True, "acknowledged": n,
        "present": n, "lost": n, "corrupted": n, "violations": [sentences], "what": what was
        checked}; more keys may be added. The default checks nothing and says so.
        """
        count = sum(len(records) for records in acknowledged.values())
        return {
            "checked": False,
            "acknowledged": count,
            "present": None,
            "lost": 0,
            "corrupted": 0,
            "violations": [],
            "what": f"nothing: the {self.name} workload defines no check",
        }

    # -- describing --------------------------------------------------------------------------

    def validate(self) -> list[str]:
        """Every problem with the workload's declaration, each naming its part."""
        problems = []
        if not _NAME.match(self.name or ""):
            problems.append(
                f"the workload's name must be lower case letters, digits and _, not {self.name!r}"
            )
        if not self.schema.tables:
            problems.append("the workload has no tables")
        problems += self.schema.validate()
        if not self.operations:
            problems.append("the workload has no operations")
        names = [op.name for op in self.operations]
        for name in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"two operations are called {name!r}")
        routes = [(op.method, _route_shape(op.route)) for op in self.operations]
        for method, shape in sorted({r for r in routes if routes.count(r) > 1}):
            problems.append(f"two operations answer {method} {shape}")
        for operation in self.operations:
            problems += operation.validate()
        if self.operations and not any(_is_number(op.weight) and op.weight > 0 for op in self.operations):
            problems.append("at least one operation needs a weight above 0")
        problems += self.validate_sizes(self.sizes)
        return problems

    def checked(self) -> Workload:
        """This workload, or WorkloadError listing every problem."""
        problems = self.validate()
        if problems:
            raise WorkloadError(
                f"the workload {self.name or '?'} ({self.source or 'unknown source'}) is not valid:\n  - "
                + "\n  - ".join(problems)
            )
        return self

    def summary(self) -> dict[str, Any]:
        """What `dbladder workloads` lists: tables, operations with their weights, the default mix."""
        mix = self.mix()
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "tables": [table.name for table in self.schema.tables],
            "sizes": dict(self.sizes),
            "operations": [
                {
                    "name": op.name,
                    "route": f"{op.method} {op.route}",
                    "write": op.write,
                    "share": round(mix.share(op.name), 4),
                }
                for op in self.operations
            ],
            "presets": list(self.presets),
        }


def _short(sql: str) -> str:
    """A SQL text on one line, at most 80 characters, quoted."""
    text = " ".join(sql.split())
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _route_shape(route: str) -> str:
    """A route with its parameter names blanked, so /a/{x} and /a/{y} count as the same route."""
    return "/".join("{}" if part.startswith("{") else part for part in route.split("/"))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
