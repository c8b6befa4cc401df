"""Checks of what a client sends that every workload needs: ids in paths, query strings, JSON bodies.

Every failure raises InvalidRequest, which the service answers with 400 and the message; a
message names the field and the rule, and quotes at most 40 characters of what was sent.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import msgspec

from ..errors import InvalidRequest

MAX_ID = 2**63 - 1
"""Ids are positive 63-bit integers: the largest value a BIGINT holds on every engine."""
MAX_BODY_BYTES = 16_384
"""The largest request body any built-in workload accepts; bigger bodies are refused with 400."""

T = TypeVar("T")


def parse_id(text: str, what: str) -> int:
    """A path segment as a positive 63-bit id, or InvalidRequest naming `what`."""
    # isascii() first: str.isdigit() also accepts digits such as '²' that int() refuses.
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        raise InvalidRequest(f"{what} must be a whole number from 1 to {MAX_ID}, not {text[:40]!r}")
    value = int(text)
    if not 1 <= value <= MAX_ID:
        raise InvalidRequest(f"{what} must be a whole number from 1 to {MAX_ID}, not {text[:40]!r}")
    return value


def parse_query(query: str, known: Collection[str]) -> dict[str, str]:
    """The parameters of a query string, each at most once and each one of `known`."""
    try:
        pairs = parse_qsl(
            query, keep_blank_values=True, strict_parsing=bool(query), max_num_fields=len(known)
        )
    except ValueError:
        raise InvalidRequest(
            f"the query must be name=value pairs of {', '.join(known)}, and nothing else"
        ) from None
    values: dict[str, str] = {}
    for key, value in pairs:
        if key not in known:
            raise InvalidRequest(f"unknown query parameter {key[:40]!r}; known: {', '.join(known)}")
        if key in values:
            raise InvalidRequest(f"query parameter {key!r} is given more than once")
        values[key] = value
    return values


def decode_body(body: bytes, decoder: msgspec.json.Decoder[T], what: str) -> T:
    """A JSON body decoded (and validated) by a msgspec decoder, or InvalidRequest saying why."""
    if len(body) > MAX_BODY_BYTES:
        raise InvalidRequest(f"the body is larger than {MAX_BODY_BYTES} bytes")
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"invalid {what}: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from None


def not_found(message: str) -> Any:
    """The JSON body of a 404 answer."""
    return {"error": "not_found", "message": message}
