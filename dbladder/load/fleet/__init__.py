"""The fleet of generator processes: one executor per process, on uvloop, figures merged in the parent.

`spec.py` is what a process is given (`ProcessSpec`, and how connections spread over the
processes); `start_line.py` the run start they all wait for; `child.py` a process's own loop;
`parent.py` the `Fleet` that starts them, sends them levels and merges what they report.
"""

from __future__ import annotations

from .child import REPORT_INTERVAL, run_process
from .parent import Fleet, GeneratorFailed, LevelDone, run_processes
from .spec import ProcessSpec, spread
from .start_line import READY_TIMEOUT, StartLine

__all__ = [
    "READY_TIMEOUT",
    "REPORT_INTERVAL",
    "Fleet",
    "GeneratorFailed",
    "LevelDone",
    "ProcessSpec",
    "StartLine",
    "run_process",
    "run_processes",
    "spread",
]
