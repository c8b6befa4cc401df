"""Type aliases more than one package uses: one name, one meaning, defined once.

A leaf: it imports nothing of dbladder's, and any package may import it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Row = tuple[Any, ...]
"""A row as an engine returns it: the columns' values in the statement's order."""

SqlParams = Sequence[Any]
"""The values bound to a statement's `?` placeholders, in order."""

Args = tuple[Any, ...]
"""An operation's arguments, as drawn by the generator or parsed from a request (msgpack-able)."""

Sizes = Mapping[str, int]
"""A data set's size parameters, e.g. {"products": 100_000, "orders": 1_000_000}."""

QueryCounts = dict[str, dict[str, int]]
"""What a workload counted per operation since it started, e.g.
{"order": {"requests": 10, "statements": 30, "round_trips": 50}}."""

JsonObject = dict[str, Any]
"""A JSON object as the result document and its sections are written and read (result.json's
`levels` rows, `integrity`, a machine's figures): keys are the schema's (docs/result-schema.md)."""
