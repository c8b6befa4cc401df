"""The fleet of generator processes: one executor per process, on uvloop, figures merged in the parent.

`spec.py` is what a process is given (`ProcessSpec`, and how connections spread over the
processes); `parts.py` which of the run's parts a fleet sends (`PartRange`: all of them on one
machine, a range of them when fleets on several machines share a run); `start_line.py` the run
start they all wait for; `child.py` a process's own loop; `base.py` what every fleet does alike
with the plan's levels (`FleetBase`); `parent.py` the `Fleet` that starts them, sends them levels
and merges what they report.
"""

from __future__ import annotations

from ..live_view import merge_live
from .base import FleetBase, LevelDone
from .child import REPORT_INTERVAL, run_process
from .parent import MERGES, Fleet, GeneratorFailed, run_processes
from .parts import BadPartRange, PartRange, check_ranges, split_parts
from .spec import ProcessSpec, fleet_specs, spread
from .start_line import READY_TIMEOUT, StartLine

__all__ = [
    "MERGES",
    "READY_TIMEOUT",
    "REPORT_INTERVAL",
    "BadPartRange",
    "Fleet",
    "FleetBase",
    "GeneratorFailed",
    "LevelDone",
    "PartRange",
    "ProcessSpec",
    "StartLine",
    "check_ranges",
    "fleet_specs",
    "merge_live",
    "run_process",
    "run_processes",
    "split_parts",
    "spread",
]
