"""The values a declared app draws: each row's random source (`RowRandom`, what a row function's
`r` is) and each request parameter's kind (`Param`), drawn for generated requests and checked in
real ones. Both depend only on the seed and the numbers they are given, so every engine receives
the same rows and the same requests.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidRequest
from .base import Draw, Sizes

_MASK = (1 << 64) - 1
_WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "amber",
    "basil",
    "cedar",
    "dune",
    "ember",
    "fern",
    "grove",
    "heath",
    "iris",
    "jade",
    "kelp",
    "lotus",
    "moss",
    "nettle",
    "olive",
    "pine",
    "quartz",
    "reed",
    "sage",
    "thyme",
    "umber",
    "vale",
    "willow",
]


def _mix64(z: int) -> int:
    """splitmix64's finaliser: a well-spread 64-bit hash of z."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & _MASK
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & _MASK
    return z ^ (z >> 31)


class RowRandom:
    """The random source of one row: a function of (seed, table, row number, draw number) alone."""

    __slots__ = ("_base", "_count", "_sizes")

    def __init__(self, seed: int, table: int, n: int, sizes: Sizes):
        self._base = _mix64((seed * 0x9E3779B97F4A7C15 + table * 0xD1B54A32D192ED03 + n) & _MASK)
        self._count = 0
        self._sizes = sizes

    def _next(self) -> int:
        self._count += 1
        return _mix64((self._base + self._count * 0x9E3779B97F4A7C15) & _MASK)

    def below(self, k: int) -> int:
        """A whole number from 0 to k - 1."""
        return self._next() % k

    def between(self, low: int, high: int) -> int:
        """A whole number from low to high, both included."""
        return low + self._next() % (high - low + 1)

    def id(self, table: str) -> int:
        """A row number of `table` (its size): 1 to sizes[table]."""
        return 1 + self._next() % self._sizes[table]

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self._next() % len(options)]

    def text(self, min_words: int = 1, max_words: int = 4) -> str:
        """Words from a fixed list, min_words to max_words of them, joined by spaces."""
        return " ".join(_WORDS[self._next() % len(_WORDS)] for _ in range(self.between(min_words, max_words)))


@dataclass(frozen=True)
class Param:
    """How one named parameter is drawn for generated requests and checked in real ones."""

    kind: str  # "row", "int", "text", "choice", "rows" or "unique"
    table: str = ""
    low: int = 0
    high: int = 0
    options: tuple[Any, ...] = ()
    sql: str = ""

    @classmethod
    def row(cls, table: str) -> Param:
        """An id of a seeded row of `table`: drawn uniformly from 1 to its size, checked as an id."""
        return cls("row", table=table)

    @classmethod
    def integer(cls, low: int, high: int) -> Param:
        """A whole number from low to high."""
        return cls("int", low=low, high=high)

    @classmethod
    def text(cls, min_words: int = 1, max_words: int = 4) -> Param:
        """Text of min_words to max_words words; accepted up to 200 characters."""
        return cls("text", low=min_words, high=max_words)

    @classmethod
    def choice(cls, *options: Any) -> Param:
        """One of the given values."""
        return cls("choice", options=tuple(options))

    @classmethod
    def rows(cls, sql: str) -> Param:
        """One value of the first column of `sql`'s rows: the user's app's own data, read once per
        run after its setup (a request file's parameter, dbladder.app)."""
        return cls("rows", sql=sql)

    @classmethod
    def unique(cls) -> Param:
        """A value no other request sends, in this run or any other: 24 hex digits of the operating
        system's randomness (96 bits), not of the seeded stream, which repeats from run to run. A
        request file's write acknowledged by the value it sent (`Acknowledge.sent`, dbladder.app)
        looks it up by it, so a value an earlier run wrote must not be sent again."""
        return cls("unique")

    def validate(self, name: str, sizes: Sizes) -> list[str]:
        if self.kind == "row" and self.table not in sizes:
            return [f"parameter {name}: Param.row({self.table!r}) needs a size for {self.table!r} in sizes"]
        if self.kind in ("int", "text") and not self.low <= self.high:
            return [f"parameter {name}: low must not be above high ({self.low} > {self.high})"]
        if self.kind == "choice" and not self.options:
            return [f"parameter {name}: Param.choice needs at least one option"]
        if self.kind == "rows" and not re.match(r"\s*(select|with)\b", self.sql, re.IGNORECASE):
            return [f"parameter {name}: Param.rows needs a SELECT, not {self.sql[:40]!r}"]
        return []

    def draw(self, draw: Draw, sizes: Sizes, rows: Mapping[str, Sequence[Any]] | None = None) -> Any:
        """A value; `rows` holds what each Param.rows query read (the user's app)."""
        if self.kind == "rows":
            values = (rows or {})[self.sql]
            return values[draw.below(len(values))]
        if self.kind == "row":
            return draw.id(sizes[self.table])
        if self.kind == "int":
            return self.low + draw.below(self.high - self.low + 1)
        if self.kind == "unique":
            return os.urandom(12).hex()
        if self.kind == "text":
            count = self.low + draw.below(self.high - self.low + 1)
            return " ".join(_WORDS[draw.below(len(_WORDS))] for _ in range(count))
        return self.options[draw.below(len(self.options))]

    def check(self, name: str, value: Any) -> Any:
        """`value` (text from a path or query, or a JSON value) as this parameter, or InvalidRequest."""
        if self.kind in ("row", "int"):
            if isinstance(value, str) and (
                value.isascii() and value.lstrip("-").isdigit() and len(value) <= 20
            ):
                value = int(value)
            low, high = (1, 2**63 - 1) if self.kind == "row" else (self.low, self.high)
            if not (isinstance(value, int) and not isinstance(value, bool) and low <= value <= high):
                raise InvalidRequest(
                    f"{name} must be a whole number from {low} to {high}, not {str(value)[:40]!r}"
                )
            return value
        if self.kind in ("text", "unique"):
            if not (isinstance(value, str) and 1 <= len(value) <= 200 and value.isprintable()):
                raise InvalidRequest(f"{name} must be text of 1 to 200 printable characters")
            return value
        if value not in self.options:
            for option in self.options:  # a choice of numbers arrives as text in a path or query
                if str(option) == value:
                    return option
            raise InvalidRequest(f"{name} must be one of {', '.join(map(str, self.options))}")
        return value
