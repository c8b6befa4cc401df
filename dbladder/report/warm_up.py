"""The warm-up before the first level and the search's calibration, in words (the terminal, the
report): how long the warm-up took, each request's first hit against its settled latency, and
what the calibration measured and chose."""

from __future__ import annotations

from ..formats import short_ms
from ..result.context import CalibrationRecord, WarmedRequest, WarmUpRecord
from ..result.run import RunResult
from .blocks import Block, Bullets, Paragraph


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{short_ms(value)} ms"


def request_words(row: WarmedRequest) -> str:
    """One request's warm-up: "bread: first 612 ms, settled 18 ms"."""
    first = _ms(row.first_ms)
    if row.first_hits > 1:
        first += f" (median of {row.first_hits:,} first hits, slowest {_ms(row.first_max_ms)})"
    if row.settled_ms is None:
        later = "sent only once"
    elif row.settled:
        later = f"settled {_ms(row.settled_ms)}"
    else:
        later = f"not settled (last {_ms(row.settled_ms)})"
    failures = f"; {row.failed:,} of {row.answers:,} answers failed" if row.failed else ""
    return f"{row.request}: first {first}, {later}{failures}"


def warm_up_head(record: WarmUpRecord) -> str:
    """How long the warm-up took, and whether every request settled."""
    unsettled = [row.request for row in record.by_request if not row.settled]
    if not unsettled:
        end = f"every request settled ({record.rule})"
    elif record.stopped_because == "time limit":
        end = f"stopped at its {record.limit_s:g} s limit with {', '.join(unsettled)} not settled"
    else:  # each sent as many times as a request may be
        end = f"{', '.join(unsettled)} not settled within {record.answer_limit} answers"
    return (
        f"warmed up in {record.seconds:.1f} s: {record.requests:,} requests, "
        f"{record.first_hits:,} of them first hits, one at a time; {end}"
    )


def warm_up_lines(record: WarmUpRecord | None) -> list[str]:
    """The warm-up's head line, then a line per request; none without a warm-up."""
    if record is None:
        return []
    return [warm_up_head(record), *(f"  {request_words(row)}" for row in record.by_request)]


def calibration_words(calibration: CalibrationRecord | None) -> str | None:
    """The search's calibration in one line, or None without one."""
    if calibration is None:
        return None
    if calibration.estimate_rps is None:
        return f"calibration: {calibration.how}; the search starts at {calibration.start_rps:g} req/s"
    return (
        f"calibration: service time {_ms(calibration.service_ms)} per request on one connection, "
        f"a first capacity estimate of {calibration.estimate_rps:,.0f} req/s on "
        f"{calibration.connections} connection(s); the first probe at {calibration.start_rps:g} "
        f"req/s ({calibration.share:g} x the estimate)"
    )


def summary_lines(result: RunResult) -> list[str]:
    """The terminal summary's lines for a round's warm-up and calibration."""
    lines = []
    for number, line in enumerate(warm_up_lines(result.warmup)):
        lines.append(("warm-up  " if number == 0 else "         ") + line)
    words = calibration_words(result.search.calibration if result.search is not None else None)
    if words is not None:
        lines.append(f"start    {words}")
    return lines


def report_blocks(result: RunResult, name: str | None = None) -> list[Block]:
    """The report's words on a run's warm-up and calibration (`name`: the run's, among several)."""
    lead = f"{name}: " if name else ""
    blocks: list[Block] = []
    if result.warmup is not None:
        blocks.append(Paragraph(f"{lead}The app {warm_up_head(result.warmup)}:"))
        blocks.append(Bullets([request_words(row) for row in result.warmup.by_request]))
    words = calibration_words(result.search.calibration if result.search is not None else None)
    if words is not None:
        blocks.append(Paragraph(f"{lead}{words[0].upper()}{words[1:]}."))
    return blocks
