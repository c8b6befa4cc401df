"""The `--expect-*` options of `run` and `compare`, and what the command prints of their outcome.

Each bound but the ceiling is repeatable and may name an operation (`--expect-p95 25@1000
--expect-p95 place_order=80@1000`); from the environment, several are separated by spaces
(`DBLADDER_EXPECT_P95="25@1000 place_order=80@1000"`), in dbladder.toml a string or a list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from ..app.workload import app_workload
from ..errors import DbladderError, ExpectationsUnmet, UsageError
from ..result.expectations import FIGURES, Check, Expectations, parse_bounds
from ..workloads.base import Workload
from ..workloads.registry import load_workload

BOUND_HELP = {
    "p95_ms": "Exit 3 unless p95 is at most MS at RATE req/s (read at the lowest level at or above it), "
    "or at the ceiling; OPERATION= reads that operation's own p95. Repeatable.",
    "p99_ms": "The same for p99. Repeatable.",
    "fail_pct": "Exit 3 unless at most PCT % failed at RATE req/s, or at the ceiling; OPERATION= reads "
    "that operation's failures. Repeatable.",
}


def expect_options(command: Any) -> Any:
    """Apply the --expect-* options to a click command."""
    for name, figure in reversed(FIGURES.items()):
        unit = "PCT" if name == "fail_pct" else "MS"
        command = click.option(
            figure.option,
            f"expect_{name}",
            multiple=True,
            metavar=f"[OPERATION=]{unit}[@RATE]",
            help=BOUND_HELP[name],
        )(command)
    return click.option(
        "--expect-ceiling",
        type=float,
        metavar="RATE",
        help="Exit 3 unless the ceiling is at least RATE req/s (everything is still written).",
    )(command)


def expectations_of(options: dict[str, Any]) -> Expectations:
    """The expectations the options give, checked; an operation the workload does not have is
    one UsageError line naming the option and the workload's operations, before anything runs."""
    expectations = Expectations(
        options.get("expect_ceiling"),
        **{name: parse_bounds(options.get(f"expect_{name}") or (), FIGURES[name].option) for name in FIGURES},
    ).checked()
    if any(bound.operation for _, bound in expectations.bounds()):
        try:
            workload: Workload
            if options.get("app_command") and options.get("requests_file"):  # the app's requests
                workload = app_workload(options["requests_file"])
            else:
                workload = load_workload(options["workload"])
        except DbladderError:
            return expectations  # the round's own check says what is wrong with the workload
        names = [operation.name for operation in workload.operations]
        problems = expectations.operation_problems(workload.name, names)
        if problems:
            raise UsageError("; ".join(problems))
    return expectations


def echo_checks(checks: Sequence[Check], echo: Callable[[str], None], prefix: str = "") -> None:
    """Every check as a line: `met` or `unmet`, then its words."""
    for found in checks:
        echo(f"{'met' if found.met else 'unmet':<9}{prefix}{found.line}")


def raise_if_unmet(unmet: Sequence[str]) -> None:
    """Exit 3 (ExpectationsUnmet) when any expectation was not met; its lines are printed already."""
    if unmet:
        raise ExpectationsUnmet("; ".join(unmet))
