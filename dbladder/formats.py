"""Numbers as every report writes them: a rate, a latency, a share, any setting as text.

A leaf: the reports (`dbladder.report.figures`) and the plans' own words for the reports
(`dbladder.report.plan_views`) write figures the same way, so they share these few functions.
"""

from __future__ import annotations

import math
from typing import Any


def rate(value: float) -> str:
    """A request rate: whole requests per second with thousands separators."""
    return f"{value:,.0f}"


def ms(value: float) -> str:
    """A latency in ms: one decimal below 100 ms, whole numbers above (the terminal's format)."""
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def short_ms(value: float) -> str:
    """A latency in ms, whole from 10 ms, one decimal below ("612", "7.9"): a figure beside others
    of its own size (an interval's ends, a warm-up's first and settled hits)."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def pct(value: float, digits: int = 2) -> str:
    """A percentage without the sign."""
    return f"{value:.{digits}f}"


def plain(value: Any) -> str:
    """Any setting or fact as text: numbers without a trailing .0, None as "-", lists joined."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else str(value)
    if isinstance(value, list | tuple):
        return ", ".join(plain(item) for item in value) or "-"
    return str(value)


def number(value: Any) -> float | None:
    """`value` as a finite float, or None when it is missing or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
