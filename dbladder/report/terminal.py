"""The terminal's view of a run: the per-level table in the seeds' shape and the ceiling."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..result.interval import interval_note, is_wide
from ..result.level import Level
from ..result.machine import Machine
from ..result.run import RunResult, as_result
from . import figures as fig
from .figures import ms
from .plan_views import view_of

COLUMNS = (
    # header, width, how to render a level row
    ("level", 5, lambda r: str(r.index + 1)),
    ("offered", 8, lambda r: f"{r.offered_rps:,.0f}"),
    ("sent", 8, lambda r: f"{r.sent_rps:,.0f}" if r.sent_rps is not None else "-"),
    ("achieved", 9, lambda r: f"{r.achieved_rps:,.0f}"),
    ("p50", 8, lambda r: ms(r.p50_ms)),
    ("p95", 8, lambda r: ms(r.p95_ms)),
    ("p99", 8, lambda r: ms(r.p99_ms)),
    ("max", 8, lambda r: ms(r.max_ms)),
    ("fail%", 6, lambda r: f"{r.fail_pct:.2f}"),
    ("dropped", 7, lambda r: f"{r.dropped:,}"),
    ("result", 6, lambda r: ("pass" if r.passed else "FAIL") + ("*" if r.flags else "")),
)


def _machine(figure: Callable[[Machine], float | None], digits: int = 0) -> Any:
    """A column from the level's machine figures (the CPU columns of "Postgres vs MariaDB on two dedicated
    CPUs"); "-" where not measured."""

    def render(row: Level) -> str:
        value = figure(row.machine) if row.machine is not None else None
        return "-" if value is None else f"{value:.{digits}f}"

    return render


# "Postgres vs MariaDB on two dedicated CPUs" prints the machine beside every level: host CPU usr / sys /
# wait / idle and load, and
# here also the service's and the database's CPU (% of one core; SQLite's is inside the service's).
MACHINE_COLUMNS = (
    ("| usr", 5, _machine(lambda machine: machine.host_usr)),
    ("sys", 3, _machine(lambda machine: machine.host_sys)),
    ("wait", 4, _machine(lambda machine: machine.host_iowait)),
    ("idle", 4, _machine(lambda machine: machine.host_idle)),
    ("load", 4, _machine(lambda machine: machine.load1, 1)),
    ("svc%", 4, _machine(lambda machine: machine.service_cpu_pct)),
    ("db%", 4, _machine(lambda machine: machine.database_cpu_pct)),
)


USERS_COLUMN = ("users", 6, lambda r: f"{r.users:,}")
X_COLUMNS = {"offered": COLUMNS[1], "users": USERS_COLUMN}
"""The second column by what a level is counted in (`PlanView.x_column`): its rate or its users."""


def _columns(x_column: str) -> tuple[Any, ...]:
    # The closed model's level is a number of users; what they offered follows from their think time.
    return (COLUMNS[0], X_COLUMNS[x_column], *COLUMNS[2:], *MACHINE_COLUMNS)


def _x_column(level: Level) -> str:
    """What a level is counted in, as its own row says: its users, when it has them."""
    return "offered" if level.users is None else USERS_COLUMN[0]


def header(x_column: str = "offered") -> str:
    """The table's header line (latencies in ms, from when each request was due)."""
    return "  ".join(name.rjust(width) for name, width, _ in _columns(x_column))


def header_of(row: Level | Mapping[str, Any]) -> str:
    """The header of a table that starts with `row` (the live progress prints it before the first)."""
    return header(_x_column(row if isinstance(row, Level) else Level.from_json(row)))


def level_line(row: Level | Mapping[str, Any]) -> str:
    """One level as a table line; failed levels and flags are explained on the lines below it."""
    level = row if isinstance(row, Level) else Level.from_json(row)
    line = "  ".join(render(level).rjust(width) for _, width, render in _columns(_x_column(level)))
    notes = [*level.reasons, *level.flags]
    if is_wide(level.p95_ms, level.p95_interval):  # a p95 from few answers: how far it may be off
        notes.append(interval_note(level.p95_interval))
    if level.diagnosis is not None:  # why it failed, or how a passing level came close
        notes.append(f"why: {level.diagnosis.line}")
    return "\n".join([line, *(f"{'':>7}^ {note}" for note in notes)])


def summary(result: RunResult | Mapping[str, Any]) -> str:
    """The result first: the ceiling, why the run stopped, and the run's own flags."""
    result = as_result(result)
    engine = result.engine
    mark = result.pass_mark
    plan = view_of(result)
    name = (engine.engine if engine else None) or "?"
    version = (engine.server_version if engine else None) or ""
    lines = [
        f"engine   {name} {version}".rstrip(),
        f"pass     p95 < {mark.p95_ms:g} ms and < {mark.max_fail_pct:g} % failed",
        *plan.summary_head(),
    ]
    if result.peak_rps is not None:
        lines.append(f"peak     {result.peak_rps:,.0f} req/s answered at the busiest level")
    lines += plan.summary_tail()
    lines.append(f"stopped  {result.stopped_because}")
    lines += [f"flag     {flag}" for flag in result.flags]
    return "\n".join(lines)


def render(result: RunResult | Mapping[str, Any]) -> str:
    """The whole run: table, then the summary."""
    result = as_result(result)
    table = [header(view_of(result).x_column), *(level_line(row) for row in result.levels)]
    return "\n".join([*table, "", summary(result)])


def request_lines(result: RunResult | Mapping[str, Any]) -> list[str]:
    """For the user's app (a result with `app`): each request's p95 and the app's CPU at the
    highest level that passed (else the last), one line."""
    result = as_result(result)
    levels = result.levels
    if result.app is None or not levels:
        return []
    passed = [level for level in levels if level.passed]
    level = max(passed, key=lambda row: row.offered_rps) if passed else levels[-1]
    figures = ", ".join(
        f"{name} p95 {op.p95_ms:,.0f} ms" for name, op in (level.operations or {}).items() if op.requests
    )
    cpu = fig.group_cpu(level, "service")
    per_1k = fig.group_cpu_per_1k(level, "service")
    # A level with no answer has a CPU share but no cost per 1,000 answers.
    per_answer = f" ({per_1k:,.0f} ms per 1,000 requests)" if per_1k is not None else ""
    app_cpu = f"; the app's CPU {cpu:.0f} %{per_answer}" if cpu is not None else ""
    return [f"requests at {level.offered_rps:,.0f} req/s: {figures or 'none answered'}{app_cpu}"]
