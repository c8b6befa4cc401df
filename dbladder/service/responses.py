"""HTTP pieces the app shares: JSON bodies, error answers, the router and bounded body reading."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import msgspec
from granian.rsgi import HTTPProtocol, Scope

from ..errors import InvalidRequest

Headers = list[tuple[str, str]]
Handler = Callable[[Scope, HTTPProtocol, dict[str, str]], Awaitable[tuple[int, bytes]]]

JSON_HEADERS: Headers = [("content-type", "application/json")]

encode = msgspec.json.Encoder().encode


class HTTPError(Exception):
    """An answer other than success, raised from anywhere in a handler."""

    def __init__(self, status: int, code: str, message: str, headers: Headers | None = None, **extra: Any):
        super().__init__(message)
        self.status = status
        self.headers = JSON_HEADERS + (headers or [])
        self.body = error_body(code, message, **extra)


def error_body(code: str, message: str, **extra: Any) -> bytes:
    """`{"error": code, "message": ..., **extra}`: a machine-readable code and a sentence for people."""
    return encode({"error": code, "message": message, **extra})


class Router:
    """Routes of fixed segments and `{name}` parameters, each with a handler per method.

    A handler gets the scope, the protocol and the path parameters as text; it validates them
    itself, so a malformed id is a 400 and not a 404. A path without parameters is one dict
    lookup; the others are matched by their shape (fixed segments, and where the parameters sit),
    most fixed segments first. Two methods on one shape may name their parameters differently
    (GET /users/{id}/todos beside POST /users/{user_id}/todos).
    """

    def __init__(self) -> None:
        self._exact: dict[str, dict[str, Handler]] = {}
        # segment count -> [(shape: fixed segments with None for parameters, method -> route)]
        self._shapes: dict[int, list[tuple[tuple[str | None, ...], dict[str, _Route]]]] = {}

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        segments = pattern.strip("/").split("/")
        names = tuple((i, s[1:-1]) for i, s in enumerate(segments) if s.startswith("{") and s.endswith("}"))
        if not names:
            self._exact.setdefault("/" + "/".join(segments), {})[method] = handler
            return
        variable = {i for i, _ in names}
        shape = tuple(None if i in variable else s for i, s in enumerate(segments))
        candidates = self._shapes.setdefault(len(segments), [])
        for known, methods in candidates:
            if known == shape:
                methods[method] = _Route(handler, names)
                return
        candidates.append((shape, {method: _Route(handler, names)}))
        candidates.sort(key=lambda candidate: candidate[0].count(None))

    def match(self, method: str, path: str) -> tuple[Handler, dict[str, str]]:
        """The handler and path parameters for a request, or HTTPError 404 / 405."""
        methods = self._exact.get(path)
        if methods is not None:
            handler = methods.get(method)
            if handler is None:
                raise _not_allowed(method, methods)
            return handler, {}
        parts = path[1:].split("/")
        for shape, routes in self._shapes.get(len(parts), ()):
            if all(fixed is None or fixed == part for fixed, part in zip(shape, parts, strict=True)):
                route = routes.get(method)
                if route is None:
                    raise _not_allowed(method, routes)
                return route.handler, {name: parts[i] for i, name in route.names}
        raise HTTPError(404, "not_found", f"no such path: {path[:100]}")


class _Route(NamedTuple):
    handler: Handler
    names: tuple[tuple[int, str], ...]  # (segment position, parameter name)


def _not_allowed(method: str, methods: dict[str, Any]) -> HTTPError:
    allowed = ", ".join(sorted(methods))
    return HTTPError(
        405, "method_not_allowed", f"{method[:10]} is not allowed here; use {allowed}", [("allow", allowed)]
    )


async def read_body(scope: Scope, proto: HTTPProtocol, limit: int) -> bytes:
    """The request body, refusing (InvalidRequest) one over `limit` bytes before buffering it all."""
    too_large = f"the body is larger than {limit} bytes"
    declared = scope.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise InvalidRequest("Content-Length must be a whole number of bytes")
        if int(declared) > limit:
            raise InvalidRequest(too_large)
        return await proto()
    # No length given (chunked): read piece by piece and stop at the bound.
    chunks = []
    size = 0
    async for chunk in proto:
        size += len(chunk)
        if size > limit:
            raise InvalidRequest(too_large)
        chunks.append(chunk)
    return b"".join(chunks)
