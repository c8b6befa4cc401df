"""What the dashboard shows, as plain JSON data: one more reader of the run's one-way flow.

The run already tells its caller everything the page needs (`run/progress.py`): about once a
second the merged live view of the level in progress (`load/live_view.py`, `LiveView`: its rates,
percentiles so far, its last whole seconds and its operations so far), and each finished level's
row (`result/level_rows.py`, with its final seconds, `result/seconds.py`, and the machine's CPU per
role). `DashboardState` folds those events into one document and counts its versions; the
server's readers wait for a newer version and send the document's JSON, made once per version
(so a browser more costs the run nothing: at most one serialisation a second however many read).

    runs[]      one per round (a comparison has several): its label, finished level rows, the
                points second by second (live ones replaced by the level's final seconds when it
                finishes), the level in progress, its operations (counts over the run so far)
    messages    the last MESSAGES messages of the run
    verdict     at the end of a comparison: the result table and the verdict's sentences
    ended       the run is over: the page keeps this last state
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..load.live_view import LiveView
from ..report.result_table import comparison_table
from ..report.runs import rounds_of
from ..report.verdicts import round_verdict
from ..result.run import RunResult
from ..result.seconds import second_rows

MESSAGES = 20
"""Messages the page keeps: enough for the last few steps of a run, not a log."""

ROW_KEYS = (
    "index", "offered_rps", "sent_rps", "achieved_rps", "p50_ms", "p95_ms", "p99_ms", "max_ms",
    "fail_pct", "failures", "passed", "reasons", "start_s", "warmup_s", "hold_s", "users",
)  # fmt: skip
"""What the level table shows of a level's row (the whole row, histograms and all, stays in result.json)."""

ROLES = ("generator", "service", "database")

RUN_MESSAGE = re.compile(r"^run (\d+) of \d+: (.+)$")
"""A comparison's message as each run starts (`run/compare.py`): the next run's label."""


class DashboardState:
    """The page's document, updated by the run's events, and its version for readers waiting on it."""

    def __init__(self, title: str, pass_mark: Mapping[str, Any] | None = None):
        self._changed = threading.Condition()
        self._version = 0
        self._text = ""
        self._text_version = -1
        self._next_label = "run"
        self.data: dict[str, Any] = {
            "title": title,
            "pass_mark": dict(pass_mark) if pass_mark else None,
            "runs": [],
            "messages": [],
            "verdict": None,
            "ended": False,
            "status": "running",
            "updated": time.time(),
        }

    # -- the run's events -----------------------------------------------------------------------

    def message(self, text: str) -> None:
        with self._changed:
            if found := RUN_MESSAGE.match(text):
                self._next_label = f"{found.group(2)} run {found.group(1)}"
                self._new_run()
            messages = self.data["messages"]
            messages.append(text)
            del messages[:-MESSAGES]
            self._bump()

    def live(self, view: LiveView) -> None:
        with self._changed:
            run = self._run()
            latest = run["levels"][-1]["index"] if run["levels"] else -1
            if run["current"] is not None:
                latest = max(latest, run["current"]["level"])
            if view.level < latest:
                run = self._new_run()  # a level number going back: the next round began
            run["current"] = {
                key: value
                for key, value in view.to_dict().items()
                if key not in ("seconds", "operations", "cpu")
            }
            if (end := view.cpu.get("time")) is not None:
                run["cpu"][round(end, 3)] = dict(view.cpu)
            for second in view.seconds:
                point = _point(second, view.level, view.measured_from, live=True)
                run["points"][f"{view.level}:{second['t']}"] = point
            run["live_operations"] = {"level": view.level, "operations": dict(view.operations)}
            self._bump()

    def level(self, row: Mapping[str, Any]) -> None:
        with self._changed:
            run = self._run()
            if any(level["index"] >= row["index"] for level in run["levels"]):
                run = self._new_run()
            run["levels"].append(_level_row(row))
            _add_operations(run["operations"], row.get("operations") or {})
            points = run["points"]
            for key in [key for key in points if key.startswith(f"{row['index']}:")]:
                del points[key]
            measured_from = float(row.get("start_s") or 0) + float(row.get("warmup_s") or 0)
            for second in row.get("seconds") or []:
                points[f"{row['index']}:{second['t']}"] = _point(second, row["index"], measured_from)
            run["current"] = None
            run["live_operations"] = None
            self._bump()

    def finish(self, result: RunResult) -> None:
        """A round's result as run_round returns it: its headline, why it stopped."""
        with self._changed:
            run = self._run()
            run["ceiling_rps"] = result.ceiling_rps
            run["stopped_because"] = result.stopped_because
            run["status"] = result.status
            run["current"] = None
            self._bump()

    def compared(self, runs: Sequence[RunResult]) -> None:
        """A comparison's runs, at its end: the result table and the verdict."""
        with self._changed:
            self.data["verdict"] = verdict_of(runs)
            shown = self.data["runs"][-len(runs) :] if runs else []
            if len(shown) == len(runs):  # each run's headline, which only its result has
                for run, result in zip(shown, runs, strict=True):
                    run |= {
                        "ceiling_rps": result.ceiling_rps,
                        "stopped_because": result.stopped_because,
                        "status": result.status,
                    }
            self._bump()

    def end(self, status: str) -> None:
        """The run is over (finished, interrupted, failed): the page keeps what it shows."""
        with self._changed:
            self.data["ended"] = True
            self.data["status"] = status
            for run in self.data["runs"]:
                run["current"] = None
            self._bump()

    def samples(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """The machine's per-second samples of the latest run (timeseries.csv rows): its CPU per role."""
        with self._changed:
            run = self._run()
            for row in rows:
                if row.get("t") in (None, ""):
                    continue
                end = round(float(row["t"]), 3)
                cpu = {role: _number(row.get(f"{role}_cpu_pct")) for role in ROLES}
                run["cpu"][end] = {"time": end} | cpu
            self._bump()

    # -- readers ----------------------------------------------------------------------------------

    def text(self) -> tuple[int, str]:
        """The document's version and its JSON, made at most once per version."""
        with self._changed:
            if self._text_version != self._version:
                self._text = json.dumps(self._document(), separators=(",", ":"), allow_nan=False)
                self._text_version = self._version
            return self._version, self._text

    def wait(self, after: int, timeout: float) -> int:
        """Until the version is past `after` (or `timeout` seconds); the version then."""
        with self._changed:
            self._changed.wait_for(lambda: self._version > after, timeout)
            return self._version

    def wake(self) -> None:
        """Wake every waiting reader (the server is stopping)."""
        with self._changed:
            self._changed.notify_all()

    def snapshot(self) -> dict[str, Any]:
        """The document as data (a copy by JSON: readers never hold the run's own objects)."""
        return json.loads(self.text()[1])

    @property
    def version(self) -> int:
        return self._version

    # -- within the lock --------------------------------------------------------------------------

    def _bump(self) -> None:
        self._version += 1
        self.data["updated"] = time.time()
        self._changed.notify_all()

    def _run(self) -> dict[str, Any]:
        return self.data["runs"][-1] if self.data["runs"] else self._new_run()

    def _new_run(self) -> dict[str, Any]:
        runs = self.data["runs"]
        if runs and not runs[-1]["levels"] and runs[-1]["current"] is None:
            runs[-1]["label"] = self._next_label  # nothing measured yet: name the empty one
            return runs[-1]
        run: dict[str, Any] = {
            "label": self._next_label,
            "levels": [],
            "points": {},
            "cpu": {},
            "current": None,
            "operations": {},
            "live_operations": None,
            "ceiling_rps": None,
            "stopped_because": None,
            "status": None,
        }
        runs.append(run)
        return run

    def _document(self) -> dict[str, Any]:
        document = dict(self.data)
        document["runs"] = [
            {key: value for key, value in run.items() if key not in ("points", "cpu")}
            | {
                "points": sorted(run["points"].values(), key=lambda point: point["time"]),
                "cpu": [run["cpu"][time] for time in sorted(run["cpu"])],
            }
            for run in self.data["runs"]
        ]
        return _finite(document)


def _point(second: Mapping[str, Any], level: int, measured_from: float, live: bool = False) -> dict[str, Any]:
    """One second's point: its time on the run's clock (its start), the level, its figures; a
    window's last part-second's counts as rates over its length, so the chart shows no drop."""
    figures = second_rows([dict(second)])[0] if "latency_from_due" in second else dict(second)
    length = figures.get("length_s") or 1.0

    def per_second(count: int) -> float:
        return count if length == 1.0 else round(count / length, 1)

    return {
        "time": round(measured_from + second["t"], 3),
        "level": level,
        "sent": per_second(figures["sent"]),
        "answered": per_second(figures["answered"]),
        "failed": per_second(figures["failed"]),
        "p50_ms": figures["p50_ms"],
        "p95_ms": figures["p95_ms"],
        "p99_ms": figures["p99_ms"],
        "live": live,
    }


def _level_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """What the level table shows of a level's row, with the machine's CPU per role (% of one core)."""
    machine = row.get("machine") or {}
    shown = {key: row.get(key) for key in ROW_KEYS}
    shown["cpu_pct"] = {role: machine.get(f"{role}_cpu_pct") for role in ROLES}
    return shown


def _add_operations(into: dict[str, dict[str, float]], operations: Mapping[str, Any]) -> None:
    """Add a finished level's per-operation counts to the run's (failures as the row counts them)."""
    for name, figures in operations.items():
        counts = into.setdefault(name, {"requests": 0, "failures": 0})
        counts["requests"] += figures.get("requests") or 0
        counts["failures"] += sum((figures.get("failures") or {}).values())


def verdict_of(runs: Sequence[RunResult]) -> dict[str, Any]:
    """A comparison's result table (rows of text, the first its header) and its verdict's sentences."""
    if not runs:
        return {"table": [], "sentences": []}
    return {
        "table": comparison_table(runs),
        "sentences": [sentence for round_ in rounds_of(runs) for sentence in round_verdict(round_)],
    }


def _finite(value: Any) -> Any:
    """The document with every non-finite float as None: JSON has no NaN or infinity."""
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _number(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def state_of_bundle(
    runs: Sequence[Mapping[str, Any]],
    samples: Sequence[Sequence[Mapping[str, Any]]],
    title: str,
    compared: bool,
) -> DashboardState:
    """The state a saved bundle gives (`report.bundle.load_bundle`'s runs and samples): every
    level, point, CPU sample, and for a comparison its verdict."""
    state = DashboardState(title, runs[0].get("pass_mark") if runs else None)
    typed = [RunResult.from_json(run) for run in runs]
    for number, (run, result, rows) in enumerate(zip(runs, typed, samples, strict=True), start=1):
        if compared:
            state.message(f"run {run.get('run', number)} of {len(runs)}: {run.get('label', '')}".rstrip())
        for row in run.get("levels") or []:
            state.level(row)
        state.samples(rows)
        state.finish(result)
    if compared:
        state.compared(typed)
    statuses = {str(run.get("status")) for run in runs}
    state.end(statuses.pop() if len(statuses) == 1 else "mixed")
    return state
