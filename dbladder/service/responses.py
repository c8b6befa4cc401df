"""HTTP pieces the app shares: JSON bodies, error answers, the router and bounded body reading."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from granian.rsgi import HTTPProtocol, Scope

from ..errors import InvalidRequest

Headers = list[tuple[str, str]]
Handler = Callable[[Scope, HTTPProtocol, str], Awaitable[tuple[int, bytes]]]

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
    """Exact paths and `PREFIX/{id}` paths, each with a handler per method.

    A handler gets the scope, the protocol and the `{id}` segment as text ("" for exact paths);
    it validates the segment itself, so a malformed id is a 400 and not a 404.
    """

    def __init__(self) -> None:
        self._exact: dict[str, dict[str, Handler]] = {}
        self._with_id: dict[str, dict[str, Handler]] = {}

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        if pattern.endswith("/{id}"):
            self._with_id.setdefault(pattern[: -len("/{id}")], {})[method] = handler
        else:
            self._exact.setdefault(pattern, {})[method] = handler

    def match(self, method: str, path: str) -> tuple[Handler, str]:
        """The handler and `{id}` text for a request, or HTTPError 404 / 405."""
        argument = ""
        methods = self._exact.get(path)
        if methods is None:
            head, _, argument = path.rpartition("/")
            methods = self._with_id.get(head)
            if methods is None:
                raise HTTPError(404, "not_found", f"no such path: {path[:100]}")
        handler = methods.get(method)
        if handler is None:
            allowed = ", ".join(sorted(methods))
            raise HTTPError(
                405,
                "method_not_allowed",
                f"{method[:10]} is not allowed here; use {allowed}",
                [("allow", allowed)],
            )
        return handler, argument


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
