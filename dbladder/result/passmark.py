"""The pass mark and the ceiling (seed 000).

A level passes when its p95 latency, measured from when each request was due, is under the mark
and its failed share (errors, timeouts and dropped requests together) is under the bound. The
ceiling is the offered rate of the highest step held, counting only the unbroken run of passes
from the first step: with --continue-after-fail a later lucky pass above a failure does not raise
it. Its precision is the step size ("a result of 11,934 means the 12,000 step held").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidConfig


@dataclass(frozen=True)
class PassMark:
    p95_ms: float = 50.0
    max_fail_pct: float = 1.0

    def validate(self) -> list[str]:
        problems = []
        if not self.p95_ms > 0:
            problems.append(f"pass mark p95_ms must be above 0, not {self.p95_ms}")
        if not 0 <= self.max_fail_pct <= 100:
            problems.append(f"pass mark max_fail_pct must be from 0 to 100, not {self.max_fail_pct}")
        return problems

    def checked(self) -> PassMark:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    def judge(self, requests: int, p95_ms: float, fail_pct: float) -> list[str]:
        """Why a level fails, in words; an empty list means it passed."""
        if requests == 0:
            return ["no request was measured in this level"]
        reasons = []
        if p95_ms >= self.p95_ms:
            reasons.append(f"p95 {p95_ms:.1f} ms is not under {self.p95_ms:g} ms")
        if fail_pct >= self.max_fail_pct:
            reasons.append(f"{fail_pct:.2f} % failed is not under {self.max_fail_pct:g} %")
        return reasons


def ceiling(offered_rates: Sequence[float], passed: Sequence[bool]) -> float | None:
    """The offered rate of the highest step held in the unbroken run of passes; None if the first failed."""
    best = None
    for rate, ok in zip(offered_rates, passed, strict=True):
        if not ok:
            break
        best = rate
    return best
