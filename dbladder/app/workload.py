"""The request file as the load sees it: a `Workload` whose operations are the file's requests.

The load's machinery (the mix, the open model's executor, the recorder's per-operation figures,
the acknowledged writes, the integrity check) works on a workload; the user's app becomes one
here, so none of it is written twice. What only the app has travels with it:

- its requests are rendered whole (`http_renderer`: the file's headers, cookies, forms, CSRF
  headers), not as a path and a JSON body;
- its `Param.rows` queries are read, and its `find` queries and invariants tried, when the round
  checks a workload's SQL (`check_sql`), after the app's setup and before the app starts, so a
  missing table is one line, not a traceback;
- its answers are judged by each request's own success statuses and acknowledged by a JSON
  field, a header or a redirect (`wrap_target`, `target.py`);
- the run's sessions and the rows read from the app's data cross to the generator processes in a
  state file (`save_state`), which they load as the workload `app-requests:STATE.json`
  (`workloads.registry.APP_REQUESTS`), as every process loads a workload from text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..engines.base import Engine
from ..types import Args, Sizes
from ..workloads.base import DataSpec, Draw, Operation, Workload
from ..workloads.registry import APP_REQUESTS
from .checks import check_queries, check_writes
from .requests import LoginSession, Request, Requests, load_request_file
from .target import AppTarget

# A request's args (the load's Args, a tuple) are (session, value of each param in the file's
# order): the session is an index into the run's sessions, 0 when there are none.


Acked = Mapping[str, Sequence[tuple[Any, ...]]]
"""The records of acknowledged writes by request: one (value,) each."""


def _not_served(*_: Any) -> Any:
    raise NotImplementedError("the user's app serves its own requests")


class AppWorkload(Workload):
    """The user's app: its request file, the values `Param.rows` read, and the logged-in sessions."""

    def __init__(
        self,
        declared: Requests,
        rows: Mapping[str, Sequence[Any]] | None = None,
        sessions: Sequence[LoginSession] = (),
    ):
        self.declared = declared
        self.rows = dict(rows or {})
        self.sessions = tuple(sessions)
        self.name = "app"
        self.description = f"the user's app, as {declared.source} asks it"
        self.source = declared.source
        self.sizes = {}
        self.operations = tuple(self._operation(request) for request in declared.requests)

    def _operation(self, request: Request) -> Operation:
        params = tuple(request.params.values())
        rows = self.rows
        sessions = len(self.sessions)

        def draw(draw: Draw, sizes: Sizes) -> Args:
            session = draw.below(sessions) if sessions else 0
            return (session, *(param.draw(draw, sizes, rows) for param in params))

        def render(args: Args) -> tuple[str, bytes | None]:
            text = request.render(values_of(request, args), "")
            return text.split(b" ", 2)[1].decode(), None

        acknowledge = _acknowledged if request.acknowledge is not None else None
        return Operation(
            request.name, request.method, request.path, request.write, request.weight,
            _not_served, _not_served, draw, render, acknowledge=acknowledge, description=request.path,
        )  # fmt: skip

    def validate(self) -> list[str]:
        # The request file was checked when it was loaded (Requests.problems), every problem at
        # once; the app has no tables of dbladder's to check.
        return []

    async def check_sql(self, engine: Engine) -> None:
        """Every query of the request file tried on the app's data as its setup left it, before
        the app or the load starts: each `Param.rows` read once (the values are kept, and go on to
        the app's target: they are not read again), each `find` and invariant run once.
        RequestFileError (exit 2), a line per request or invariant and its SQL, for one the
        engine refuses, that fails when run, or a `Param.rows` that finds no rows
        (checks.check_queries)."""
        self.rows.update(await check_queries(engine, self.declared))

    def http_renderer(self, host: str) -> Callable[[tuple[int, Args]], bytes]:
        requests = list(self.declared.requests)
        sessions = self.sessions
        headers = self.declared.headers

        def render(request: tuple[int, Args]) -> bytes:
            index, args = request
            session = sessions[args[0]] if sessions else None
            return requests[index].render(values_of(requests[index], args), host, session, headers)

        return render

    def wrap_target(self, target: Any, store: Any) -> Any:
        return AppTarget(target, self.declared.requests, store)

    async def sizes_in(self, engine: Engine) -> dict[str, int]:
        return {}

    async def verify(
        self, engine: Engine, data: DataSpec, acknowledged: Acked, *rest: Any, **more: Any
    ) -> dict[str, Any]:
        """Every acknowledged value looked up with its request's `find`, every invariant run."""
        values = {name: [str(record[0]) for record in records] for name, records in acknowledged.items()}
        found = await check_writes(engine, self.declared, values, {})
        count = sum(found.acknowledged.values())
        broken = {name: rows for name, rows in found.violations.items() if rows}
        finds = sum(1 for request in self.declared.requests if request.find)
        return {
            "checked": True,
            "acknowledged": count,
            "present": count - found.lost_count,
            "lost": found.lost_count,
            "corrupted": 0,
            "violations": [f"{name}: {rows} row(s)" for name, rows in broken.items()],
            "what": (
                f"each acknowledged value looked up by its request's find SQL ({finds} request(s)), "
                f"{len(self.declared.invariants)} invariant(s) that must return no rows"
            ),
            "lost_ids": [f"{name} {value}" for name, lost in found.lost.items() for value in lost[:10]],
            "invariants": found.violations,
        }


def values_of(request: Request, args: Args) -> dict[str, Any]:
    """A request's parameter values by name, from its args."""
    return dict(zip(request.params, args[1:], strict=True))


def _acknowledged(args: Args, body: Any) -> tuple[Any, ...]:
    # The app's acknowledgements are read by AppTarget from the whole answer; this marks the
    # operation as one that acknowledges (Operation.acknowledge is not None).
    raise NotImplementedError


def save_state(
    path: Path, declared: Requests, rows: Mapping[str, Sequence[Any]], sessions: Sequence[LoginSession]
) -> str:
    """Write what the generator processes need to rebuild the app's workload; its workload text."""
    state = {
        "requests": str(Path(declared.source).resolve()),
        "rows": {sql: list(values) for sql, values in rows.items()},
        "sessions": [asdict(session) for session in sessions],
    }
    path.write_text(json.dumps(state))
    return APP_REQUESTS + str(path.resolve())


def from_state(path: Path) -> AppWorkload:
    """The app's workload from a state file `save_state` wrote (in a generator process)."""
    state = json.loads(path.read_text())
    sessions = [LoginSession(**session) for session in state["sessions"]]
    return AppWorkload(load_request_file(Path(state["requests"])), state["rows"], sessions)


def app_workload(requests_file: Path) -> AppWorkload:
    """The app's workload in the round's own process, before its sessions and rows exist."""
    return AppWorkload(load_request_file(requests_file))
