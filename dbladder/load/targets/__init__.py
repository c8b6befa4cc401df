"""Where an executor's requests go: the `RequestTarget` protocol, and how a request can end.

Two targets implement it: the service over HTTP (`http.py`, `HttpTarget`) and an engine straight
through the workload's operations, no HTTP (`direct.py`, `DirectTarget`). A result reaches the
executor through a plain callback, `callback(token, result, body)`, where `result` is the HTTP
status (an int) or a failure cause (a str: `TIMEOUT`, `CONNECT`, `PROTOCOL` in `dbladder.outcomes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..mix import Request

ResultCallback = Callable[[Any, "int | str", "bytes | None"], None]
"""`callback(token, result, body)`: result is an HTTP status or a failure cause; body is None unless kept."""


class RequestTarget(Protocol):
    """Where requests go: over HTTP to the service, or straight to an engine (direct mode).

    `render` turns a request of the mix (operation index, args) into whatever `send` takes; `send` starts it
    and returns False at the in-flight limit (the request is then dropped), else calls `callback(token,
    result, body)` exactly once later, `result` being an HTTP status or a failure cause (`TIMEOUT`, `CONNECT`,
    `PROTOCOL`). Every request settles within `timeout` plus `sweep_interval` seconds. With `keep_body` the
    callback gets the answer's body (the HTTP target: bytes; the direct target: the Answer's body object);
    `load.acknowledged` asks for it for writes only.
    """

    timeout: float
    sweep_interval: float

    @property
    def in_flight(self) -> int: ...

    def render(self, request: Request) -> Any: ...

    def send(
        self, payload: Any, callback: ResultCallback, token: Any = None, keep_body: bool = False
    ) -> bool: ...

    def close(self) -> None: ...
