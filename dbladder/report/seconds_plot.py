"""Every level second by second: p95 and answers per second over the run's time, one line per run.

A level that failed by a stall shows as one spike among flat seconds; one that saturated as a
climb that does not come down. Each level's measured window starts at a dotted line labelled with
its number; the pass mark is drawn on p95; a second that failed the mark on its own has an open
marker. A window's last part-second (`SecondRow.length_s` below 1) is drawn at its own middle,
its answers as a rate over its length, so that a part of a second does not read as a drop. The
line breaks between levels (the warm-up and a search's rest are not measured). Only
results whose levels carry their seconds (`Level.seconds`: the open model's levels, the closed
model's holds) have this plot.
"""

from __future__ import annotations

from ..result.level import Level, SecondRow
from . import figures as fig
from .plots import PlotFigure, Series, series_of
from .runs import Round
from .svg import Axis, Chart, Point


def _fails(second: SecondRow, p95_mark: float, max_fail_pct: float) -> bool:
    over = second.p95_ms is not None and second.p95_ms >= p95_mark
    return over or 100 * second.failed / max(second.sent, 1) >= max_fail_pct


def _run_time(level: Level, second: SecondRow) -> float:
    """The middle of a level's second (or last part-second) on the run's clock."""
    return level.start_s + level.warmup_s + second.t + second.length_s / 2


def _answers_per_second(second: SecondRow) -> float:
    """A second's answers as a rate: its count over its length (a part-second's count is smaller)."""
    return second.answered / second.length_s if second.length_s > 0 else float(second.answered)


def _points(s: Series, value: str, p95_mark: float, max_fail_pct: float) -> list[Point]:
    points: list[Point] = []
    for level in s.run.levels:
        for second in level.seconds or ():
            figure = second.p95_ms if value == "p95" else _answers_per_second(second)
            part = f" (its last {fig.plain(second.length_s)} s)" if second.length_s < 1 else ""
            tip = (
                f"{s.run.name}, level {level.number}, second {second.t + 1}{part}: p95 "
                f"{fig.plain(second.p95_ms) if second.p95_ms is not None else '-'} ms, sent {second.sent:,}, "
                f"answered {second.answered:,}, failed {second.failed:,}"
            )
            hollow = _fails(second, p95_mark, max_fail_pct)
            points.append(Point(_run_time(level, second), figure, hollow=hollow, tip=tip))
        if points and points[-1].y is not None:
            points.append(Point(points[-1].x, None))  # break the line before the next level
    return points


def over_time(round_: Round) -> PlotFigure | None:
    """The per-second plot of the round's runs; None when no level has its seconds."""
    all_series = [s for s in series_of(round_) if any(level.seconds for level in s.run.levels)]
    if not all_series:
        return None
    result_mark = all_series[0].run.result.pass_mark
    p95_mark = float(result_mark.p95_ms) if result_mark else 0.0
    max_fail_pct = float(result_mark.max_fail_pct) if result_mark else 100.0
    times = [
        _run_time(level, second)
        for s in all_series
        for level in s.run.levels
        for second in level.seconds or ()
    ]
    x = Axis.covering([*times, 0.0], "seconds into the run", pad=0.02)
    p95s = [
        second.p95_ms
        for s in all_series
        for level in s.run.levels
        for second in level.seconds or ()
        if second.p95_ms is not None
    ]
    answered = [
        _answers_per_second(second)
        for s in all_series
        for level in s.run.levels
        for second in level.seconds or ()
    ]
    charts = []
    for value, y in (
        ("p95", Axis.covering([*p95s, p95_mark], "p95 ms from when due (log)", log=True)),
        ("answered", Axis.covering(answered, "answers per second")),
    ):
        title = "p95 of each second" if value == "p95" else "answers per second in each second"
        chart = Chart(title, x, y, width=900, height=320)
        for s in all_series:
            chart.series(
                s.run.name, _points(s, value, p95_mark, max_fail_pct), s.color, s.dash, s.marker, value
            )
        if value == "p95":
            chart.hline(p95_mark, f"pass mark {fig.plain(p95_mark)} ms")
        for level in all_series[0].run.levels:
            chart.vline(
                level.start_s + level.warmup_s, str(level.number), "#777", row=level.index % 2, mark="level"
            )
        charts.append(chart.svg())
    return PlotFigure(
        "seconds",
        "Every level second by second: the p95 of the requests due in each second (open markers: a "
        "second that failed the pass mark on its own) and the answers that arrived in it per second "
        "(a window's last part-second as a rate over its length), against the time into the run; "
        "each level's measured part starts at its numbered dotted line. A stall is a spike among "
        "flat seconds, saturation a climb that stays.",
        charts,
        wide=True,
    )
