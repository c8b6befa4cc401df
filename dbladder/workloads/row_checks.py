"""What a declared app's row functions make, checked as each row is made, before an engine sees it.

Each engine refuses a value of the wrong type or a repeated key in its own words, and some only
after the whole table has gone in (PostgreSQL builds the primary key once the COPY is over, so a
repeated id is "could not create unique index", with no row number). Checking here gives one
message on every engine, naming the file, the table, the row number and the column, as the first
bad row is made:

    todo.py: rows['todos'] row 3, column 'done': 'yes' is text, not an int
    todo.py: rows['users'] row 7, column 'id': repeats the primary key (id = 6) of an earlier row

The type check costs a few hundred nanoseconds a value. Keys are remembered in a bitmap while
they are small whole numbers (the usual `n` or `n * k` of a row function: an eighth of a byte a
key) and in a set otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..engines.base import INT_RANGE, Column, Table
from .base import WorkloadError

BIGINT_RANGE = (-(2**63), 2**63 - 1)

BITMAP_KEYS_PER_ROW = 64
"""Whole-number keys below 64 times the table's row count go into the bitmap (8 bytes a row at most)."""


def _whole(low: int, high: int, kind: str) -> Callable[[Any], str | None]:
    def problem(value: Any) -> str | None:
        if not isinstance(value, int):  # True and False are 1 and 0 to every driver
            return f"{_shown(value)}, not {kind}"
        if not low <= value <= high:
            return f"{value} is outside {kind}'s range, {low:,} to {high:,}"
        return None

    return problem


def _double(value: Any) -> str | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return f"{_shown(value)}, not a double"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite double"
    return None


def _bool(value: Any) -> str | None:
    if value is True or value is False or (isinstance(value, int) and value in (0, 1)):
        return None
    return f"{_shown(value) if not isinstance(value, int) else value}, not a bool (0 or 1)"


def _text(max_length: int) -> Callable[[Any], str | None]:
    def problem(value: Any) -> str | None:
        if not isinstance(value, str):
            return f"{_shown(value)}, not text"
        if max_length and len(value) > max_length:
            return f"text of {len(value)} characters, over the column's max_length {max_length}"
        return None

    return problem


def _shown(value: Any) -> str:
    """`'yes' is text`, `1.5 is a float`, `None is a NoneType`: the value and what it is."""
    kinds = {str: "text", float: "a float", int: "an int", bool: "a bool"}
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{text} is {kinds.get(type(value), 'a ' + type(value).__name__)}"


def _checker(column: Column) -> Callable[[Any], str | None]:
    if column.type == "int":
        return _whole(*INT_RANGE, "an int")
    if column.type == "bigint":
        return _whole(*BIGINT_RANGE, "a bigint")
    if column.type == "double":
        return _double
    if column.type == "bool":
        return _bool
    return _text(column.max_length)


class RowChecks:
    """The checks of one table's rows: `check(n, row)` raises WorkloadError at the first bad value,
    its message starting with `where`."""

    def __init__(self, where: str, table: Table, rows: int, unique: Sequence[tuple[str, ...]] = ()):
        self._where = where  # "todo.py: rows['todos']"
        self._columns = table.columns
        self._checks = [_checker(column) for column in table.columns]
        names = table.column_names
        keys = [("primary key", table.primary_key), *(("unique index", columns) for columns in unique)]
        self._keys = [_Seen(kind, columns, [names.index(c) for c in columns], rows) for kind, columns in keys]

    def check(self, n: int, row: Sequence[Any]) -> None:
        for column, check, value in zip(self._columns, self._checks, row, strict=True):
            problem = check(value)
            if problem is not None:
                raise WorkloadError(f"{self._where} row {n}, column {column.name!r}: {problem}")
        for seen in self._keys:
            repeated = seen.add(row)
            if repeated is not None:
                raise WorkloadError(f"{self._where} row {n}, {repeated} of an earlier row")


class _Seen:
    """The values of one key so far: a bitmap for small whole numbers, a set for anything else."""

    def __init__(self, kind: str, columns: tuple[str, ...], positions: list[int], rows: int):
        self._kind = kind
        self._columns = columns
        self._positions = positions
        self._bitmap_size = BITMAP_KEYS_PER_ROW * max(rows, 1) if len(positions) == 1 else 0
        self._bitmap = bytearray()
        self._others: set[Any] = set()

    def add(self, row: Sequence[Any]) -> str | None:
        """None for a new key; else what the repeat says (`column 'id': repeats the primary key ...`)."""
        if self._bitmap_size:
            key = row[self._positions[0]]
            if isinstance(key, int) and 0 <= key < self._bitmap_size:
                byte, bit = divmod(key, 8)
                if byte >= len(self._bitmap):  # grow by doubling, up to the bound
                    size = min(max(byte + 1, 2 * len(self._bitmap)), self._bitmap_size // 8 + 1)
                    self._bitmap.extend(bytes(size - len(self._bitmap)))
                if self._bitmap[byte] >> bit & 1:
                    return self._repeat(row)
                self._bitmap[byte] |= 1 << bit
                return None
        key = tuple(row[i] for i in self._positions)
        if key in self._others:
            return self._repeat(row)
        self._others.add(key)
        return None

    def _repeat(self, row: Sequence[Any]) -> str:
        names = ", ".join(repr(c) for c in self._columns)
        values = ", ".join(f"{c} = {row[i]!r}" for c, i in zip(self._columns, self._positions, strict=True))
        column = "column" if len(self._columns) == 1 else "columns"
        return f"{column} {names}: repeats the {self._kind} ({values})"
