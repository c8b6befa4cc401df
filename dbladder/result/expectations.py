"""Expectations a pipeline sets on a run (`--expect-*`), and which of them a result did not meet.

    ceiling_rps         the ceiling (`ceiling_rps`) is at least this rate
    p95_ms[@rate]       p95 (over every request, failures at the timeout) is at most this many ms
    fail_pct[@rate]     the failed share is at most this percentage

A figure "at a rate" is read at the level with the lowest offered rate at or above it: latency
and failures grow with the rate, so if they are met there they are met at the rate asked for, and
a run that never reached the rate has not shown that it meets them. Without a rate, at the level
the ceiling was found at (the highest held; the ceiling level of a closed round). When one is not
met, `dbladder run` still writes everything and exits with EXIT_UNMET (3), like k6's 99 for a
failed threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidConfig, UsageError

EXIT_UNMET = 3
"""The exit code of a run whose result did not meet an expectation (0 ok, 1 runtime error, 2 usage)."""


@dataclass(frozen=True)
class AtRate:
    """A bound on a figure, read at a rate (None: at the ceiling's level)."""

    value: float
    rate: float | None = None

    def words(self, unit: str) -> str:
        where = f" at {self.rate:,.0f} req/s" if self.rate is not None else " at the ceiling"
        return f"{self.value:g}{unit}{where}"


@dataclass(frozen=True)
class Expectations:
    """What a run must show; every field None means nothing is expected."""

    ceiling_rps: float | None = None
    p95_ms: AtRate | None = None
    fail_pct: AtRate | None = None

    def validate(self) -> list[str]:
        """Every problem, each naming its option; empty when valid."""
        problems = []
        if self.ceiling_rps is not None and not (math.isfinite(self.ceiling_rps) and self.ceiling_rps > 0):
            problems.append(f"--expect-ceiling must be above 0 req/s, not {self.ceiling_rps:g}")
        for option, bound, low, high in (
            ("--expect-p95", self.p95_ms, 0.0, math.inf),
            ("--expect-fail-pct", self.fail_pct, 0.0, 100.0),
        ):
            if bound is None:
                continue
            if not (math.isfinite(bound.value) and low <= bound.value <= high):
                problems.append(f"{option} must be from {low:g} to {high:g}, not {bound.value:g}")
            if bound.rate is not None and not (math.isfinite(bound.rate) and bound.rate > 0):
                problems.append(f"{option}'s rate must be above 0 req/s, not {bound.rate:g}")
        return problems

    def checked(self) -> Expectations:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    @property
    def any(self) -> bool:
        return any(value is not None for value in (self.ceiling_rps, self.p95_ms, self.fail_pct))

    def to_dict(self) -> dict[str, Any]:
        def bound(value: AtRate | None) -> dict[str, Any] | None:
            return None if value is None else {"value": value.value, "rate": value.rate}

        return {
            "ceiling_rps": self.ceiling_rps,
            "p95_ms": bound(self.p95_ms),
            "fail_pct": bound(self.fail_pct),
        }


def parse_at_rate(text: str, option: str) -> AtRate:
    """ "25" or "25@1000" (a bound, at 1,000 req/s); UsageError naming the option otherwise."""
    value, _, rate = text.partition("@")
    try:
        return AtRate(float(value), float(rate) if rate else None)
    except ValueError:
        raise UsageError(f"{option} takes a number, or NUMBER@RATE (e.g. 25@1000), not {text!r}") from None


def _level_at(
    levels: Sequence[dict[str, Any]], rate: float | None, ceiling: float | None
) -> dict[str, Any] | None:
    if rate is None:
        if ceiling is None:
            return None
        held = [level for level in levels if level["passed"] and level["offered_rps"] <= ceiling]
        return max(held, key=lambda level: level["offered_rps"], default=None)
    above = [level for level in levels if level["offered_rps"] >= rate]
    return min(above, key=lambda level: (level["offered_rps"], not level["passed"]), default=None)


def unmet(expectations: Expectations, result: dict[str, Any]) -> list[str]:
    """Each expectation the result did not meet, in words ("p95 at 1,000 req/s was 73.2 ms, expected at
    most 25 ms"); empty when every one was met."""
    problems = []
    ceiling = result.get("ceiling_rps")
    levels = [level for level in result.get("levels", []) if level.get("state") == "finished"]
    if expectations.ceiling_rps is not None:
        expected = f"expected at least {expectations.ceiling_rps:,.0f} req/s"
        if ceiling is None:
            problems.append(f"no level held, so there is no ceiling; {expected}")
        elif ceiling < expectations.ceiling_rps:
            problems.append(f"the ceiling was {ceiling:,.0f} req/s; {expected}")
    for name, bound, unit, figure in (
        ("p95", expectations.p95_ms, " ms", "p95_ms"),
        ("failed share", expectations.fail_pct, " %", "fail_pct"),
    ):
        if bound is None:
            continue
        level = _level_at(levels, bound.rate, ceiling)
        where = f"{bound.rate:,.0f} req/s" if bound.rate is not None else "the ceiling"
        if level is None:
            problems.append(
                f"no level ran at {where} or above, so its {name} is unknown; "
                f"expected at most {bound.words(unit)}"
            )
        elif level[figure] > bound.value:
            problems.append(
                f"{name} at {where} was {level[figure]:g}{unit} "
                f"(the {level['offered_rps']:,.0f} req/s level); expected at most {bound.value:g}{unit}"
            )
    return problems
