"""The report's four plots for one round, one line per run, as inline SVG (`svg.py`).

The x axis is the level: the offered rate (open model), or the users (closed model, "Postgres vs MariaDB on
two dedicated CPUs").

1. achieved against offered rate, with the line where they are equal (closed: achieved rate against
   users, with the line of what the users could send were every answer instant);
2. p50, p95 and p99 against the level, three panels on one log axis, the pass mark on p95;
3. failed % against the level, with the pass mark;
4. CPU against the level, three panels on one axis: database, service, generator; a panel says
   "not measured in this run" when no run has its figures;
5. p95 of each operation against the level, a panel per operation on one log axis, so a level's
   failure can be traced to the operation that caused it (when the results have operations).

6. a ceiling search's probes in the order they ran: the rate of each probe against its number,
   held or failed, so the climb and the bisection show; only when a run of the round searched.

In the plots against the rate, a search's probes are drawn in order of rate, not of running.
Every plot marks each run's ceiling (closed: the users level held; a spike has none) with a
dotted vertical line in its colour; failed levels have open markers. Colour and marker shape
follow the engine, the line's dash the run number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..result.level import Level
from ..result.run import PassMarkSet
from . import figures as fig
from .runs import Round, RunInRound
from .svg import DASHES, MARKERS, PALETTE, Axis, Chart, Point

RATE_LABEL = "offered rate, req/s"


@dataclass(frozen=True)
class Series:
    run: RunInRound
    color: str
    marker: str
    dash: str


@dataclass(frozen=True)
class PlotFigure:
    """One plot (or row of panels) with its caption."""

    key: str  # "throughput", "latency", "failures" or "cpu"
    caption: str
    svgs: list[str]
    wide: bool = False


def series_of(round_: Round) -> list[Series]:
    """Each run of the round with its colour and marker (by engine) and dash (by run number)."""
    dashes = list(DASHES)
    return [
        Series(
            run, PALETTE[g % len(PALETTE)], MARKERS[g % len(MARKERS)], dashes[(run.number - 1) % len(dashes)]
        )
        for g, group in enumerate(round_.groups)
        for run in group.runs
    ]


def _points(run: RunInRound, value: Callable[[Level], float | None], what: str, unit: str) -> list[Point]:
    points = []
    # A search ran its probes out of rate order; a line over the rate axis joins them by rate.
    rows = sorted(run.levels, key=run.x) if run.plan.probes_in_order else run.levels
    for row in rows:
        figure = value(row)
        where = run.plan.level_words(row)
        tip = (
            f"{run.name}, level {row.number} ({where}): "
            + (f"{what} {figure:,.3g} {unit}" if figure is not None else f"{what} not measured")
            + ("" if row.passed else " - failed")
        )
        points.append(Point(run.x(row), figure, hollow=not row.passed, tip=tip))
    return points


def _figure(row: Level, key: str) -> float | None:
    return fig.number(getattr(row, key))


def _x_axis(round_: Round) -> Axis:
    values = [run.x(row) for run in round_.runs for row in run.levels] or [round_.start]
    label = round_.runs[0].plan.x_label if round_.runs else RATE_LABEL
    return Axis.covering(values, label, pad=0.04)


def _ceilings(chart: Chart, all_series: list[Series]) -> None:
    """Each run's ceiling as a dotted line; runs sharing a ceiling share its label."""
    labelled: list[float] = []
    for item in all_series:
        ceiling = item.run.ceiling_x
        if ceiling is None:
            continue
        words = item.run.plan.ceiling_words(ceiling)
        text = f"ceiling {words}" if ceiling not in labelled else ""
        chart.vline(ceiling, text, item.color, row=len(labelled))
        if text:
            labelled.append(ceiling)


def _pass_mark(round_: Round) -> PassMarkSet:
    mark = round_.runs[0].result.pass_mark if round_.runs else None
    return PassMarkSet(
        p95_ms=float(mark.p95_ms if mark else 0), max_fail_pct=float(mark.max_fail_pct if mark else 0)
    )


def throughput(round_: Round, all_series: list[Series]) -> PlotFigure:
    """Achieved against offered rate: where the lines leave the diagonal, requests go unanswered.
    A users plan's is achieved rate against users, its diagonal what the users could send
    (`PlanView.throughput`)."""
    words = round_.plan.throughput()
    x = _x_axis(round_)
    achieved = [row.achieved_rps for s in all_series for row in s.run.levels]
    offered = [row.offered_rps for s in all_series for row in s.run.levels]
    y = Axis.covering([*achieved, *offered], "achieved rate, req/s", pad=0.04)
    chart = Chart(words.title, x, y)
    if words.slope:
        chart.diagonal(words.diagonal, slope=words.slope)
    _achieved(chart, all_series)
    return PlotFigure("throughput", words.caption, [chart.svg()])


def _achieved(chart: Chart, all_series: list[Series]) -> None:
    for s in all_series:
        chart.series(
            s.run.name,
            _points(s.run, lambda r: r.achieved_rps, "achieved", "req/s"),
            s.color,
            dash=s.dash,
            marker=s.marker,
            key="achieved_rps",
        )
    _ceilings(chart, all_series)


def latency(round_: Round, all_series: list[Series]) -> PlotFigure:
    """p50, p95, p99 in three panels sharing one log axis, so the panels compare by eye."""
    x = _x_axis(round_)
    mark = _pass_mark(round_)
    keys = ("p50_ms", "p95_ms", "p99_ms")
    values = [getattr(row, key) for s in all_series for row in s.run.levels for key in keys]
    y = Axis.covering([*values, mark.p95_ms], "ms from when due (log)", log=True)
    svgs = []
    for key in keys:
        name = key.split("_")[0]
        chart = Chart(f"{name} latency", x, y, width=430, height=360, left=58)
        for s in all_series:
            chart.series(
                s.run.name,
                _points(s.run, partial(_figure, key=key), name, "ms"),
                s.color,
                dash=s.dash,
                marker=s.marker,
                key=key,
            )
        if key == "p95_ms":
            chart.hline(mark.p95_ms, f"pass mark {fig.plain(mark.p95_ms)} ms")
        _ceilings(chart, all_series)
        svgs.append(chart.svg())
    return PlotFigure(
        "latency",
        "Latency percentiles against the level, on a log axis shared by the three panels; "
        "the pass mark applies to p95.",
        svgs,
        wide=True,
    )


def failures(round_: Round, all_series: list[Series]) -> PlotFigure:
    """Failed % (errors, timeouts, dropped) against the level, with the pass mark's bound."""
    x = _x_axis(round_)
    mark = _pass_mark(round_)
    values = [row.fail_pct for s in all_series for row in s.run.levels]
    y = Axis.covering([*values, mark.max_fail_pct * 1.5], "failed requests, %")
    chart = Chart("Failed requests", x, y)
    for s in all_series:
        chart.series(
            s.run.name,
            _points(s.run, lambda r: r.fail_pct, "failed", "%"),
            s.color,
            dash=s.dash,
            marker=s.marker,
            key="fail_pct",
        )
    chart.hline(mark.max_fail_pct, f"pass mark {fig.plain(mark.max_fail_pct)} %")
    _ceilings(chart, all_series)
    return PlotFigure(
        "failures",
        "Failed requests (error answers, timeouts, connection failures and requests dropped by the "
        "generator) as a share of all requests due in the level.",
        [chart.svg()],
    )


def cpu(round_: Round, all_series: list[Series]) -> PlotFigure:
    """Database, service and generator CPU against the level: three panels sharing one axis."""
    x = _x_axis(round_)
    panels: list[tuple[str, Callable[[Level], float | None]]] = [
        ("database", partial(fig.group_cpu, group="database")),
        ("service", partial(fig.group_cpu, group="service")),
        ("generator", fig.generator_cpu),
    ]
    values = [
        figure
        for s in all_series
        for row in s.run.levels
        for _, value in panels
        if (figure := value(row)) is not None
    ]
    y = Axis.covering([*values, 100.0], "CPU, % of one CPU")
    svgs = []
    for name, value in panels:
        chart = Chart(f"{name} CPU", x, y, width=430, height=360, left=58)
        measured = any(value(row) is not None for s in all_series for row in s.run.levels)
        for s in all_series:
            if measured:
                chart.series(
                    s.run.name,
                    _points(s.run, value, f"{name} CPU", "% of one CPU"),
                    s.color,
                    dash=s.dash,
                    marker=s.marker,
                    key=f"{name}_cpu_pct",
                )
        if not measured:
            chart.note("not measured in this run")
        _ceilings(chart, all_series)
        svgs.append(chart.svg())
    return PlotFigure(
        "cpu",
        "CPU used by the database server, the web service and the load generator, in % of one CPU "
        "(two busy processes read 200), over each level's hold.",
        svgs,
        wide=True,
    )


def operation_names(round_: Round) -> list[str]:
    """The operations any run of the round recorded, in the order they first appear."""
    names: dict[str, None] = {}
    for run in round_.runs:
        for row in run.levels:
            names.update(dict.fromkeys(row.operations or {}))
    return list(names)


def _operation_p95(row: Level, name: str) -> float | None:
    figures = (row.operations or {}).get(name)
    if not figures or not figures.requests:
        return None
    return fig.number(figures.p95_ms)


def operations(round_: Round, all_series: list[Series], names: list[str]) -> PlotFigure:
    """p95 of each operation, a panel per operation sharing one log axis, the pass mark on each."""
    x = _x_axis(round_)
    mark = _pass_mark(round_)
    values = [
        value
        for s in all_series
        for row in s.run.levels
        for name in names
        if (value := _operation_p95(row, name)) is not None
    ]
    y = Axis.covering([*values, mark.p95_ms], "p95 ms from when due (log)", log=True)
    svgs = []
    for name in names:
        chart = Chart(f"{name} p95", x, y, width=430, height=360, left=58)
        for s in all_series:
            chart.series(
                s.run.name,
                _points(s.run, partial(_operation_p95, name=name), f"{name} p95", "ms"),
                s.color,
                dash=s.dash,
                marker=s.marker,
                key=name,
            )
        chart.hline(mark.p95_ms, f"pass mark {fig.plain(mark.p95_ms)} ms")
        _ceilings(chart, all_series)
        svgs.append(chart.svg())
    return PlotFigure(
        "operations",
        "p95 of each operation against the level, on one log axis: the operation whose latency "
        "rises first is the one that stops the level.",
        svgs,
        wide=True,
    )


def probes(round_: Round, all_series: list[Series]) -> PlotFigure:
    """A ceiling search's probes in the order run: each probe's rate against its number, held
    (filled) or failed (hollow), and each run's ceiling as a horizontal mark."""
    searched = [s for s in all_series if s.run.plan.probes_in_order]
    count = max(len(s.run.levels) for s in searched)
    x = Axis.covering([1.0, float(max(count, 2))], "probe, in the order run")
    rates = [row.offered_rps for s in searched for row in s.run.levels]
    y = Axis.covering(rates, "offered rate, req/s", pad=0.04)
    chart = Chart("Ceiling search: every probe, in order", x, y)
    for s in searched:
        points = [
            Point(
                float(number),
                row.offered_rps,
                hollow=not row.passed,
                tip=f"{s.run.name}, probe {number}: {fig.rate(row.offered_rps)} req/s "
                + ("held" if row.passed else "failed: " + "; ".join(row.reasons)),
            )
            for number, row in enumerate(s.run.levels, start=1)
        ]
        chart.series(s.run.name, points, s.color, dash=s.dash, marker=s.marker, key="offered_rps")
        if s.run.ceiling is not None:
            chart.hline(s.run.ceiling, f"ceiling {fig.rate(s.run.ceiling)}", s.color)
    return PlotFigure(
        "probes",
        "The ceiling search's probes in the order they ran: the rate doubles until a probe fails "
        "(hollow), then each probe halves the gap between the highest rate held and the lowest "
        "failed, until they are within the search's resolution.",
        [chart.svg()],
    )


def figures_for(round_: Round) -> list[PlotFigure]:
    """The round's plots, in the order the report shows them: the four of every round (with a
    search's probes second), then the operations' p95 when the results have per-operation figures."""
    all_series = series_of(round_)
    plots = [
        throughput(round_, all_series),
        latency(round_, all_series),
        failures(round_, all_series),
        cpu(round_, all_series),
    ]
    if any(s.run.plan.probes_in_order and s.run.levels for s in all_series):
        plots.insert(1, probes(round_, all_series))
    names = operation_names(round_)
    if names:
        plots.append(operations(round_, all_series, names))
    return plots
