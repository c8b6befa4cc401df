"""The warm-up before the first level and the search's calibration, in words (the terminal, the
report): how long the warm-up took, each request's first hit against its settled latency, and
what the calibration measured and chose."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..result.run import RunResult
from .blocks import Block, Bullets, Paragraph


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"


def request_words(row: Mapping[str, Any]) -> str:
    """One request's warm-up: "bread: first 612 ms, settled 18 ms"."""
    hits = row.get("first_hits") or 0
    first = _ms(row.get("first_ms"))
    if hits > 1:
        first += f" (median of {hits:,} first hits, slowest {_ms(row.get('first_max_ms'))})"
    if row.get("settled_ms") is None:
        later = "sent only once"
    elif row.get("settled"):
        later = f"settled {_ms(row['settled_ms'])}"
    else:
        later = f"not settled (last {_ms(row['settled_ms'])})"
    failed = row.get("failed") or 0
    failures = f"; {failed:,} of {row.get('answers', 0):,} answers failed" if failed else ""
    return f"{row['request']}: first {first}, {later}{failures}"


def warm_up_head(record: Mapping[str, Any]) -> str:
    """How long the warm-up took, and whether every request settled."""
    rows = record.get("by_request") or []
    unsettled = [row["request"] for row in rows if not row.get("settled")]
    if not unsettled:
        end = f"every request settled ({record.get('rule')})"
    elif record.get("stopped_because") == "time limit":
        end = f"stopped at its {record.get('limit_s', 0):g} s limit with {', '.join(unsettled)} not settled"
    else:  # each sent as many times as a request may be
        end = f"{', '.join(unsettled)} not settled within {record.get('answer_limit', 100)} answers"
    return (
        f"warmed up in {record.get('seconds', 0):.1f} s: {record.get('requests', 0):,} requests, "
        f"{record.get('first_hits', 0):,} of them first hits, one at a time; {end}"
    )


def warm_up_lines(record: Mapping[str, Any] | None) -> list[str]:
    """The warm-up's head line, then a line per request; none without a warm-up."""
    if not record:
        return []
    return [warm_up_head(record), *(f"  {request_words(row)}" for row in record.get("by_request") or [])]


def calibration_words(calibration: Mapping[str, Any] | None) -> str | None:
    """The search's calibration in one line, or None without one."""
    if not calibration:
        return None
    if calibration.get("estimate_rps") is None:
        start = calibration["start_rps"]
        return f"calibration: {calibration.get('how')}; the search starts at {start:g} req/s"
    return (
        f"calibration: service time {_ms(calibration['service_ms'])} per request on one connection, "
        f"a first capacity estimate of {calibration['estimate_rps']:,.0f} req/s on "
        f"{calibration['connections']} connection(s); the first probe at {calibration['start_rps']:g} "
        f"req/s ({calibration['share']:g} x the estimate)"
    )


def summary_lines(result: Mapping[str, Any]) -> list[str]:
    """The terminal summary's lines for a round's warm-up and calibration."""
    lines = []
    for number, line in enumerate(warm_up_lines(result.get("warmup"))):
        lines.append(("warm-up  " if number == 0 else "         ") + line)
    words = calibration_words((result.get("search") or {}).get("calibration"))
    if words is not None:
        lines.append(f"start    {words}")
    return lines


def report_blocks(result: RunResult, name: str | None = None) -> list[Block]:
    """The report's words on a run's warm-up and calibration (`name`: the run's, among several)."""
    lead = f"{name}: " if name else ""
    blocks: list[Block] = []
    if result.warmup:
        blocks.append(Paragraph(f"{lead}The app {warm_up_head(result.warmup)}:"))
        blocks.append(Bullets([request_words(row) for row in result.warmup.get("by_request") or []]))
    words = calibration_words(result.search.calibration if result.search is not None else None)
    if words is not None:
        blocks.append(Paragraph(f"{lead}{words[0].upper()}{words[1:]}."))
    return blocks
