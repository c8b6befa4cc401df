"""A trivial RSGI app for `benchmarks/generator.py`: the cheapest target granian can serve.

Run with `granian --interface rsgi --working-dir benchmarks hello_app:app`.
"""

from __future__ import annotations

from typing import Any

_HEADERS = [("content-type", "text/plain")]
_BODY = b"Hello, world!"


async def app(scope: Any, protocol: Any) -> None:
    """Answer every request with 200 and a fixed 13-byte body."""
    protocol.response_bytes(200, _HEADERS, _BODY)
