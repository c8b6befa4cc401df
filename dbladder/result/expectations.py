"""Expectations a pipeline sets on a run (`--expect-*`), and how a result measured up to each.

    ceiling_rps                  the ceiling (`ceiling_rps`) is at least this rate
    p95_ms  [OPERATION=]MS[@RATE]    p95 (over every request, failures at the timeout) is at most MS
    p99_ms  [OPERATION=]MS[@RATE]    the same for p99
    fail_pct [OPERATION=]PCT[@RATE]  the failed share is at most PCT percent

A bound may be given more than once (at several rates, for several operations). With an
OPERATION it is read from that operation's own figures in the level (`levels[].operations`), the
way k6 gives a threshold to the requests of one tag (`http_req_duration{name:checkout}`): the
write may have its own p95 beside the one over every request.

A figure "at a rate" is read at the level with the lowest offered rate at or above it: latency
and failures grow with the rate, so if they are met there they are met at the rate asked for, and
a run that never reached the rate has not shown that it meets them. Without a rate, at the level
the ceiling was found at (the highest held; the ceiling level of a closed round). Every check,
met or not, goes into the result's `expectations`; when one is not met, `dbladder run` still
writes everything and exits with EXIT_UNMET (3), like k6's 99 for a failed threshold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidConfig, UsageError
from .part import Part

EXIT_UNMET = 3
"""The exit code of a run whose result did not meet an expectation (0 ok, 1 runtime error, 2 usage)."""


@dataclass(frozen=True)
class AtRate:
    """A bound on a figure, read at a rate (None: at the ceiling's level), over every request or
    over one operation's."""

    value: float
    rate: float | None = None
    operation: str | None = None

    @property
    def where(self) -> str:
        return f"{self.rate:,.0f} req/s" if self.rate is not None else "the ceiling"

    def words(self, unit: str) -> str:
        return f"{self.value:g}{unit} at {self.where}"


@dataclass(frozen=True)
class ExpectedFigure:
    """A figure an expectation can bound: its option, its words, its key in a level row, its unit."""

    option: str
    name: str
    key: str
    unit: str
    high: float


FIGURES = {
    "p95_ms": ExpectedFigure("--expect-p95", "p95", "p95_ms", " ms", math.inf),
    "p99_ms": ExpectedFigure("--expect-p99", "p99", "p99_ms", " ms", math.inf),
    "fail_pct": ExpectedFigure("--expect-fail-pct", "failed share", "fail_pct", " %", 100.0),
}
"""By the Expectations field that holds its bounds."""


@dataclass(frozen=True)
class Expectations:
    """What a run must show; nothing expected by default."""

    ceiling_rps: float | None = None
    p95_ms: tuple[AtRate, ...] = ()
    p99_ms: tuple[AtRate, ...] = ()
    fail_pct: tuple[AtRate, ...] = ()

    def bounds(self) -> Iterable[tuple[ExpectedFigure, AtRate]]:
        for name, figure in FIGURES.items():
            for bound in getattr(self, name):
                yield figure, bound

    def validate(self) -> list[str]:
        """Every problem, each naming its option; empty when valid."""
        problems = []
        if self.ceiling_rps is not None and not (math.isfinite(self.ceiling_rps) and self.ceiling_rps > 0):
            problems.append(f"--expect-ceiling must be above 0 req/s, not {self.ceiling_rps:g}")
        seen = set()
        for figure, bound in self.bounds():
            option = figure.option
            if not (math.isfinite(bound.value) and 0 <= bound.value <= figure.high):
                span = f"from 0 to {figure.high:g}" if math.isfinite(figure.high) else "0 or more"
                problems.append(f"{option} must be {span}, not {bound.value:g}")
            if bound.rate is not None and not (math.isfinite(bound.rate) and bound.rate > 0):
                problems.append(f"{option}'s rate must be above 0 req/s, not {bound.rate:g}")
            key = (option, bound.operation, bound.rate)
            if key in seen:
                of = f" for {bound.operation}" if bound.operation else ""
                problems.append(f"{option} is given twice{of} at {bound.where}; give each one bound")
            seen.add(key)
        return problems

    def operation_problems(self, workload: str, operations: Sequence[str]) -> list[str]:
        """One problem per bound on an operation the workload does not have, listing the ones it has."""
        return [
            f"{figure.option}: the {workload} workload has no operation {bound.operation!r}; "
            f"its operations: {', '.join(operations)}"
            for figure, bound in self.bounds()
            if bound.operation is not None and bound.operation not in operations
        ]

    def checked(self) -> Expectations:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    @property
    def any(self) -> bool:
        return self.ceiling_rps is not None or any(True for _ in self.bounds())

    def to_dict(self) -> dict[str, Any]:
        def bound(value: AtRate) -> dict[str, Any]:
            return {"value": value.value, "rate": value.rate, "operation": value.operation}

        return {
            "ceiling_rps": self.ceiling_rps,
            **{name: [bound(b) for b in getattr(self, name)] for name in FIGURES},
        }


_BOUND = re.compile(
    r"^(?:(?P<operation>[A-Za-z_][\w.-]*)=)?(?P<value>[^@=]+?)(?P<unit>ms|%)?(?:@(?P<rate>.+))?$"
)


def parse_at_rate(text: str, option: str) -> AtRate:
    """ "25", "25ms", "25@1000" (a bound, at 1,000 req/s) or "place_order=80@500" (on that
    operation's figure); UsageError naming the option otherwise."""
    found = _BOUND.match(text.strip())
    unit = "%" if option == "--expect-fail-pct" else "ms"
    try:
        if found is None or found["unit"] not in (None, unit):
            raise ValueError
        rate = found["rate"]
        return AtRate(float(found["value"]), float(rate) if rate else None, found["operation"])
    except ValueError:
        raise UsageError(
            f"{option} takes a number, NUMBER@RATE or OPERATION=NUMBER@RATE "
            f"(e.g. 25@1000, place_order=80@500), not {text!r}"
        ) from None


def parse_bounds(texts: Iterable[str], option: str) -> tuple[AtRate, ...]:
    """Every value a repeatable --expect-* option was given."""
    return tuple(parse_at_rate(text, option) for text in texts)


@dataclass(frozen=True, kw_only=True)
class Check(Part):
    """One expectation as the result measured up to it: the bound, the figure found (None when
    there was none to read), the level it was read at, whether it was met, and in words."""

    option: str
    operation: str | None = None
    bound: float
    rate: float | None = None
    found: float | None
    level_rps: float | None = None
    met: bool
    line: str


@dataclass(frozen=True, kw_only=True)
class Checked(Part):
    """A result's `expectations`: every check, and whether all were met."""

    met: bool
    checks: tuple[Check, ...] = ()

    @property
    def unmet(self) -> list[str]:
        return [check.line for check in self.checks if not check.met]


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


def check(expectations: Expectations, result: dict[str, Any]) -> Checked:
    """How the result measured up to each expectation, in the order the options list them."""
    checks = []
    ceiling = result.get("ceiling_rps")
    levels = [level for level in result.get("levels", []) if level.get("state") == "finished"]
    if expectations.ceiling_rps is not None:
        expected = f"at least {expectations.ceiling_rps:,.0f} req/s"
        met = ceiling is not None and ceiling >= expectations.ceiling_rps
        if ceiling is None:
            line = f"no level held, so there is no ceiling; expected {expected}"
        else:
            line = f"the ceiling was {ceiling:,.0f} req/s; {'' if met else 'expected '}{expected}"
        checks.append(
            Check(
                option="--expect-ceiling", bound=expectations.ceiling_rps, found=ceiling, met=met, line=line
            )
        )
    for figure, bound in expectations.bounds():
        level = _level_at(levels, bound.rate, ceiling)
        name = figure.name + (f" of {bound.operation}" if bound.operation else "")
        found = None
        if level is not None and bound.operation is None:
            found = level[figure.key]
        elif level is not None:
            row = (level.get("operations") or {}).get(bound.operation)
            found = row[figure.key] if row and row.get("requests") else None
        met = found is not None and found <= bound.value
        if level is None:
            line = f"no level ran at {bound.where} or above, so its {name} is unknown"
        elif found is None:
            line = (
                f"the {level['offered_rps']:,.0f} req/s level had no {bound.operation} request, "
                f"so its {name} is unknown"
            )
        else:
            at = f"the {level['offered_rps']:,.0f} req/s level"
            line = f"{name} at {bound.where} was {found:g}{figure.unit} ({at})"
        line += f"; {'' if met else 'expected '}at most {bound.value:g}{figure.unit}"
        checks.append(
            Check(
                option=figure.option,
                operation=bound.operation,
                bound=bound.value,
                rate=bound.rate,
                found=found,
                level_rps=None if level is None else level["offered_rps"],
                met=met,
                line=line,
            )
        )
    return Checked(met=all(c.met for c in checks), checks=tuple(checks))


def unmet(expectations: Expectations, result: dict[str, Any]) -> list[str]:
    """Each expectation the result did not meet, in words ("p95 at 1,000 req/s was 73.2 ms (the
    1,000 req/s level); expected at most 25 ms"); empty when every one was met."""
    return check(expectations, result).unmet
