"""HTTP pieces the app shares: JSON bodies, error answers, the router and bounded body reading."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

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
    lookup; the others are matched by their number of segments, fixed segments before parameters.
    """

    def __init__(self) -> None:
        self._exact: dict[str, dict[str, Handler]] = {}
        # segment count -> [(segments, parameter positions, methods)], most fixed segments first
        self._patterns: dict[
            int, list[tuple[tuple[str, ...], tuple[tuple[int, str], ...], dict[str, Handler]]]
        ] = {}

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        segments = tuple(pattern.strip("/").split("/"))
        parameters = tuple(
            (i, s[1:-1]) for i, s in enumerate(segments) if s.startswith("{") and s.endswith("}")
        )
        if not parameters:
            self._exact.setdefault("/" + "/".join(segments), {})[method] = handler
            return
        candidates = self._patterns.setdefault(len(segments), [])
        for known, _, methods in candidates:
            if known == segments:
                methods[method] = handler
                return
        candidates.append((segments, parameters, {method: handler}))
        candidates.sort(key=lambda candidate: len(candidate[1]))

    def match(self, method: str, path: str) -> tuple[Handler, dict[str, str]]:
        """The handler and path parameters for a request, or HTTPError 404 / 405."""
        params: dict[str, str] = {}
        methods = self._exact.get(path)
        if methods is None:
            parts = path[1:].split("/")
            for segments, parameters, candidate in self._patterns.get(len(parts), ()):
                variable = {i for i, _ in parameters}
                if all(parts[i] == segment for i, segment in enumerate(segments) if i not in variable):
                    methods = candidate
                    params = {name: parts[i] for i, name in parameters}
                    break
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
        return handler, params


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
