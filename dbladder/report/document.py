"""The report as blocks (headings, paragraphs, tables, settings files, plots), built once from results.

`markdown.py` and `html.py` each render these blocks; neither decides what the report says, so the
two can never disagree. The order is the published experiments': the result first, then the setup with every
setting written out (`setup.py`), then each run's per-level table, then what the result does not
show (`caveats.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from ..engine_registry import runs_in_process
from ..result.interval import interval_words, is_wide
from ..result.level import Level
from ..result.run import RunResult, as_result
from ..result.verdict import RULE
from . import figures as fig
from .blocks import Block, Bullets, Heading, Paragraph, Plots, Report, TableBlock, TableColumn
from .caveats import caveats
from .expectations import expectations_section
from .integrity import integrity_section
from .native import native_lines
from .plan_views.meaning import result_words
from .result_table import engine_labels, round_rows
from .roundtrips import QUERY_COLUMNS, queries_section, query_cells, round_trip_section
from .runs import Results, Round, rounds_of
from .setup import pass_mark_words, setup_section
from .verdicts import round_verdict, title_words
from .warm_up import report_blocks


def build(results: Results, samples: int | None = None) -> Report:
    """The whole report for one or more results (`samples`: per-second samples in timeseries.csv)."""
    typed = [as_result(result) for result in results]
    rounds = rounds_of(typed)
    groups = [group for round_ in rounds for group in round_.groups]
    labels = list(dict.fromkeys(group.label for group in groups))
    if len(typed) == 1:
        run = rounds[0].runs[0]
        title = f"{run.name}: {title_words(run)}"
    else:
        title = " vs ".join(labels)
    dates = sorted({str(r.started_at or "")[:10] for r in typed} - {""})
    subtitle = "; ".join(round_.title for round_ in rounds) + (f" ({', '.join(dates)})" if dates else "")
    blocks: list[Block] = [
        *_result_section(rounds),
        *integrity_section(typed),
        *expectations_section(typed),
        *setup_section(rounds),
        *_levels_section(rounds, len(typed)),
        *queries_section(rounds),
        *round_trip_section(rounds),
        Heading(2, "What this does not show"),
        Bullets([f"**{caveat.lead}** {caveat.text}" for caveat in caveats(rounds)]),
        Paragraph(_files_note(typed, samples)),
    ]
    return Report(title, subtitle, blocks, rounds)


def _result_words(rounds: list[Round], marks: list[str]) -> str:
    """What the result table's figures mean, for the plans of the rounds in it."""
    return result_words([round_.plan for round_ in rounds], marks)


def _spike_table(round_: Round) -> TableBlock:
    """Each spike run's three phases side by side: users, rate, latency, failures, recovery."""
    columns = [
        TableColumn("run", numeric=False),
        TableColumn("phase", numeric=False),
        TableColumn("users"),
        TableColumn("achieved req/s"),
        TableColumn("p95 ms"),
        TableColumn("p99 ms"),
        TableColumn("fail %"),
        TableColumn("result", numeric=False),
        TableColumn("p95 recovery", numeric=False),
    ]
    rows, failed = [], []
    for run in round_.runs:
        levels = {level.index: level for level in run.levels}  # the view names them; here in full
        for name, phase in run.plan.phases():
            row = levels[phase.index]
            rows.append(
                [
                    run.name,
                    name,
                    fig.rate(row.users or 0),
                    fig.rate(row.achieved_rps),
                    fig.ms(row.p95_ms),
                    fig.ms(row.p99_ms),
                    fig.pct(row.fail_pct),
                    _verdict(row),
                    run.plan.recovery_words(short=True) if name == "after" else "",
                ]
            )
            failed.append(not row.passed)
    return TableBlock(columns, rows, failed=failed, kind="spike")


def _result_section(rounds: list[Round]) -> list[Block]:
    marks = list(dict.fromkeys(pass_mark_words(run.result) for round_ in rounds for run in round_.runs))
    blocks: list[Block] = [Heading(2, "Result"), Paragraph(_result_words(rounds, marks))]
    labels = engine_labels(rounds)
    compare = len(labels) > 1
    columns = [
        TableColumn("round", numeric=False),
        TableColumn("runs"),
        *(TableColumn(label) for label in labels),
    ]
    if compare:
        columns.append(TableColumn("difference", numeric=False))
    rows = []
    for round_ in rounds:
        for found in round_rows(round_):
            row = [found.test, found.runs, *(found.cells.get(label, "-") for label in labels)]
            if compare:
                row.append(found.difference or "-")
            rows.append(row)
    blocks.append(TableBlock(columns, rows, kind="result"))
    if compare:
        blocks.append(Paragraph(f"How the difference is judged: {RULE}"))
    for round_ in rounds:
        verdict = " ".join(round_verdict(round_))
        blocks.append(Paragraph(f"**{round_.title}.** {verdict}" if len(rounds) > 1 else verdict))
        if round_.spike:
            blocks.append(_spike_table(round_))
        blocks += [Paragraph(line) for line in native_lines(round_)]
        blocks += [Paragraph(line) for line in stall_lines(round_)]
        several = len(round_.runs) > 1
        for run in round_.runs:  # what the app met before the first level, and where it started
            blocks += report_blocks(run.result, run.name if several else None)
        why = [
            f"{run.name}: {line}" if several else line
            for run in round_.runs
            for line in diagnosis_lines(run.levels)
        ]
        if why:  # the summary says why each level failed, as the level's table does
            blocks.append(Bullets(why))
        blocks.append(Plots(round_))
    return blocks


_Render = Callable[[Level], str]


def level_columns(levels: Sequence[Level]) -> list[tuple[TableColumn, _Render]]:
    """The columns of a per-level table: the published experiments' figures, then whichever CPU figures
    exist."""
    columns: list[tuple[TableColumn, _Render]] = [(TableColumn("level"), lambda r: str(r.number))]
    if any(row.users is not None for row in levels):
        # Closed model: the level is its users; what they offered is only what they could have
        # sent had every answer been instant (users / mean think time), so it is labelled so.
        columns += [
            (TableColumn("users"), lambda r: fig.rate(r.users or 0)),
            (TableColumn("could send req/s"), lambda r: fig.rate(r.offered_rps)),
        ]
    else:
        columns.append((TableColumn("offered req/s"), lambda r: fig.rate(r.offered_rps)))
        if any(row.sent_rps is not None for row in levels):
            columns.append((TableColumn("sent req/s"), lambda r: fig.rate(r.sent_rps or 0)))
    columns += [
        (TableColumn("achieved req/s"), lambda r: fig.rate(r.achieved_rps)),
        (TableColumn("p50 ms"), lambda r: fig.ms(r.p50_ms)),
        (TableColumn("p95 ms"), lambda r: fig.ms(r.p95_ms)),
    ]
    if any(is_wide(row.p95_ms, row.p95_interval) for row in levels):
        # Only where it is wide: a p95 read from few answers, a level one slow page decides.
        columns.append((TableColumn("p95 at 95 % ms", numeric=False), _interval))
    columns += [
        (TableColumn("p99 ms"), lambda r: fig.ms(r.p99_ms)),
        (TableColumn("max ms"), lambda r: fig.ms(r.max_ms)),
        (TableColumn("answered p95 ms"), lambda r: fig.ms(r.answered_p95_ms)),
        (TableColumn("fail %"), lambda r: fig.pct(r.fail_pct)),
        (TableColumn("dropped"), lambda r: fig.rate(r.dropped)),
    ]
    if fig.any_level(levels, fig.host_cpu):
        columns += [
            (TableColumn(f"host {_SHORT.get(kind, kind)} %"), _host_column(kind)) for kind in fig.HOST_KINDS
        ]
    if fig.any_level(levels, fig.load_average):
        columns.append((TableColumn("load"), _figure_column(fig.load_average, 1)))
    for group in ("service", "database"):
        cpu = partial(fig.group_cpu, group=group)
        if fig.any_level(levels, cpu):
            columns.append((TableColumn(f"{_SHORT.get(group, group)} CPU %"), _figure_column(cpu)))
    for group in ("service", "database"):
        per_1k = partial(fig.group_cpu_per_1k, group=group)
        if fig.any_level(levels, per_1k):
            columns.append((TableColumn(f"{_SHORT.get(group, group)} CPU ms/1k"), _figure_column(per_1k, 1)))
    columns.append((TableColumn("gen CPU %"), _figure_column(fig.generator_cpu)))
    for part in fig.BREAKDOWN_PARTS:
        if any(part in fig.breakdown(row) for row in levels):
            heading = _BREAKDOWN_HEADINGS[part]
            columns.append((TableColumn(heading), _figure_column(partial(_part, key=part), 2)))
    columns.append((TableColumn("result", numeric=False), _verdict))
    if any(row.diagnosis is not None for row in levels):
        columns.append((TableColumn("why", numeric=False), _why))
    return columns


def _interval(row: Level) -> str:
    """A wide p95 interval, "180-320" (or "180 or more"); nothing where it is narrow."""
    if not is_wide(row.p95_ms, row.p95_interval):
        return ""
    return interval_words(row.p95_interval).removesuffix(" ms").replace(" ms or more", " or more")


def _why(row: Level) -> str:
    """The diagnosis in a word or two (the whole line is in the notes under the table)."""
    cause = row.diagnosis
    if cause is None:
        return ""
    return cause.kind + (f": {cause.resource}" if cause.resource else "")


def stall_lines(round_: Round) -> list[str]:
    """What a search did about a probe that failed by a stall: it ran it once more, and whether the
    ceiling still rests on a stall."""
    lines = []
    for run in round_.runs:
        line = run.plan.stall_line()
        if line is not None:
            lines.append((f"{run.name}: " if len(round_.runs) > 1 else "") + line)
    return lines


def diagnosis_lines(levels: Sequence[Level]) -> list[str]:
    """Each diagnosed level's line: why it failed, or how a passing level came close."""
    return [f"Level {row.number}, why: {row.diagnosis.line}" for row in levels if row.diagnosis is not None]


# Short column headings keep a level table with every CPU column on a laptop screen.
_SHORT = {"iowait": "wait", "database": "db"}
_BREAKDOWN_HEADINGS = {"pool_wait": "pool wait ms", "database": "in db ms", "other": "other ms"}


def _optional(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _figure_column(figure: Callable[[Level], float | None], digits: int = 0) -> _Render:
    """A column of an optional figure: "-" where a level has none."""
    return lambda row: _optional(figure(row), digits)


def _host_column(kind: str) -> _Render:
    return lambda row: _optional((fig.host_cpu(row) or {}).get(kind))


def _part(row: Level, key: str) -> float | None:
    return fig.breakdown(row).get(key)


def _verdict(row: Level) -> str:
    return ("pass" if row.passed else "FAIL") + ("*" if row.flags else "")


def _levels_section(rounds: list[Round], result_count: int) -> list[Block]:
    blocks: list[Block] = [
        Heading(2, "Levels"),
        Paragraph(
            "Latency in ms from when each request was due (waiting for a connection counts), over "
            "every request due in the level: a failed request (error answer, timeout, connection "
            "failure, dropped) counts as the timeout, so a level with over 1 % failed cannot show a "
            "p99 below it; answered p95 is over the successful answers alone. p95 at 95 %, where a "
            "level has it (its p95 read from few requests): where the level's true p95 lies with "
            "95 % confidence, from the order statistics of its requests, shown when wider than a "
            "fifth of the p95 and a twentieth of the pass mark. Achieved is the "
            "successful answers received within the level's window, by when they arrived; sent is "
            "what the generator actually sent. A ceiling search's levels are its probes, in the "
            "order run. "
            "Host CPU columns are % of all CPUs; service, db (database server) and gen (load "
            "generator) CPU are % of one CPU (two busy processes read 200), and without a machine "
            "sample gen CPU is the busiest generator process's own count; CPU ms/1k is CPU "
            "milliseconds per 1,000 requests. Pool wait, in db and other: the service's mean time "
            "per request waiting for a connection, holding one, and the rest. `*`: the level "
            "carries a flag, explained below its table."
            + "".join(dict.fromkeys(round_.plan.levels_note for round_ in rounds))
        ),
    ]
    for round_ in rounds:
        for run in round_.runs:
            heading = run.name if result_count == 1 else f"{run.name}: {round_.title}"
            blocks.append(Heading(3, heading))
            levels = run.levels
            if not levels:
                blocks.append(Paragraph("No level finished."))
                continue
            columns = level_columns(levels)
            blocks.append(
                TableBlock(
                    [column for column, _ in columns],
                    [[render(row) for _, render in columns] for row in levels],
                    failed=[not row.passed for row in levels],
                    kind="levels",
                )
            )
            operations = operations_table(levels)
            if operations is not None:
                blocks.append(operations)
            notes = [
                f"Level {row.number}: " + "; ".join([*row.reasons, *row.flags])
                for row in levels
                if row.reasons or row.flags
            ]
            notes += diagnosis_lines(levels)
            notes += run.plan.level_notes()
            database_cpu = fig.any_level(levels, partial(fig.group_cpu, group="database"))
            if not fig.any_level(levels, fig.host_cpu) and not database_cpu:
                notes.append("CPU of the host, the service and the database: not measured in this run.")
            elif (
                not database_cpu
                and run.result.engine is not None
                and runs_in_process(run.result.engine.engine)
            ):
                notes.append("SQLite runs inside the service's processes: its CPU is in the service's.")
            if notes:
                blocks.append(Bullets(notes))
    return blocks


def operations_table(levels: Sequence[Level]) -> TableBlock | None:
    """Each level split by operation: its requests, p50/p95/p99 and failed %, so a reader sees which
    operation failed the level. None when the levels carry no per-operation figures."""
    if not any(row.operations for row in levels):
        return None
    counted = any(row.queries for row in levels)  # a workload that counts its queries
    rows, failed = [], []
    for row in levels:
        for name, figures in (row.operations or {}).items():
            requests = figures.requests
            rows.append(
                [
                    str(row.number),
                    name,
                    fig.rate(requests),
                    *(
                        fig.ms(value) if requests else "-"
                        for value in (figures.p50_ms, figures.p95_ms, figures.p99_ms)
                    ),
                    f"{figures.fail_pct:.2f}" if requests else "-",
                    ", ".join(f"{cause} {count:,}" for cause, count in (figures.failures or {}).items()),
                    *(query_cells(row, name) if counted else ()),
                ]
            )
            failed.append(not row.passed)
    columns = [
        TableColumn("level"),
        TableColumn("operation", numeric=False),
        TableColumn("requests"),
        TableColumn("p50"),
        TableColumn("p95"),
        TableColumn("p99"),
        TableColumn("fail %"),
        TableColumn("failures", numeric=False),
        *(QUERY_COLUMNS if counted else ()),
    ]
    return TableBlock(columns, rows, failed=failed, kind="operations")


def _files_note(results: Sequence[RunResult], samples: int | None) -> str:
    source = "result.json" if len(results) == 1 else "compare.json"
    series = (
        f"timeseries.csv ({samples} per-second samples)"
        if samples
        else "timeseries.csv (empty: the machine was not sampled in this run)"
    )
    version = results[0].dbladder_version or "?"
    return (
        f"Built by dbladder {version} from `{source}`; beside it: levels.csv, {series}, "
        "report.md, report.html."
    )
