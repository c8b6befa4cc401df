"""The result document of a round: its assembly level by level, its headline figures, and its saving.

`Run` holds the typed result while the round runs and writes it after every level, so a killed
run leaves every finished level on disk; a run stopped by an error after its first save is ended
with a status that says why (`ended_on_error`), never left "running".
"""

from __future__ import annotations

import contextlib
import json
import os
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import DbladderError, UsageError
from ..plans import Outcome, Stop, plan_to_config
from ..result.context import FaultRecord
from ..result.expectations import check
from ..result.files import write_json
from ..result.level import Level
from ..result.level_rows import level_row
from ..result.part import Part
from ..result.passmark import PassMark
from ..result.run import Config, RunResult, SearchAsRun, Spike
from ..result.schema import RESULT_SCHEMA
from ..result.spike import spike_recovery
from ..workloads.base import Mix, Workload
from .config import RunConfig

if TYPE_CHECKING:  # the observer (the service, numpy) is not needed to name a run's folder
    from .observation import RunObserver


class Run:
    """One round in progress: its typed result (`dbladder.result.run.RunResult`), filled in step by
    step and saved after every level."""

    def __init__(self, config: RunConfig, path: Path):
        self.config = config
        self.path = path
        self.result = RunResult.from_json(
            {
                "schema": RESULT_SCHEMA,
                "kind": config.plan.kind,
                "model": config.plan.model,
                "dbladder_version": __version__,
                "status": "running",
                "started_at": _now(),
                "finished_at": None,
                "config": config.to_dict(),
                "pass_mark": asdict(config.pass_mark),
                "engine": None,
                "service": None,
                "seeding": None,
                "ceiling_rps": None,
                "stopped_because": None,
                "levels": [],
                "flags": [],
                "environment": {},
            }
        )
        if config.settings is not None:
            self.update(settings=config.settings)

    def update(self, **fields: object) -> None:
        """Set fields of the result, each as `RunResult` types it: a part (`Service`, `Integrity`...),
        a tuple of them, or a plain value (a figure, words, a mapping the result keeps as it is); a
        field new to the document goes last. A part given as JSON data is refused (TypeError): who
        makes a section types it, so the result is typed while it is made."""
        for name, value in fields.items():
            if _untyped(name, value):
                raise TypeError(f"the result's {name!r} given as JSON data, not as its typed part")
        self.result = self.result.updated(fields)

    def replan(self, config: RunConfig) -> None:
        """Go on with `config`, whose plan was chosen after the run started (a search's start,
        calibrated on the app): the config block and the headline say the plan as it runs."""
        self.config = replace(self.config, plan=config.plan)
        # The plans are a leaf that knows no result: their config keys and headline are JSON data.
        block = Config.from_json(self.result.config.to_json() | plan_to_config(config.plan))
        self.update(kind=config.plan.kind, config=block, **headline(config.plan.headline([])))

    def flag(self, *flags: str) -> None:
        """Add flags to the run's own."""
        self.update(flags=(*self.result.flags, *flags))

    def flag_last_level(self, words: str) -> None:
        """A flag on the last level's row (the level a lost server struck)."""
        *before, last = self.result.levels
        self.update(levels=(*before, last.updated({"flags": (*last.flags, words)})))

    def add_faults(
        self, records: Sequence[Mapping[str, Any]], struck: Callable[[int], Sequence[Mapping[str, Any]]]
    ) -> None:
        """The faults' records in the result, at the top and in the rows of the levels they struck
        (`struck`: a level's, by its index), with a flag."""
        levels = tuple(
            level.updated({"faults": found}) if (found := struck(level.index)) else level
            for level in self.result.levels
        )
        self.update(faults=tuple(FaultRecord.from_json(record) for record in records), levels=levels)
        self.flag(
            "faults were injected (" + ", ".join(record["fault"] for record in records) + "): "
            "the ceiling is not a capacity figure"
        )

    def save(self) -> None:
        write_json(self.path, self.result.to_json())

    def add_level(self, level: dict[str, Any], observer: RunObserver) -> dict[str, Any]:
        row = level_row(level, self.config.pass_mark)
        # The machine's figures, the service's time, and the flags (the lag's against the pass mark).
        observer.level(level, row, self.config.pass_mark.p95_ms)
        self.update(levels=(*self.result.levels, Level.from_json(row)))
        self._figures()
        self.save()
        return row

    def finish(self, status: str, stopped_because: str, stop: Stop | None = None) -> dict[str, Any]:
        """The result, finished, as JSON data: `stop` is why the plan stopped, when it was the plan
        that did."""
        self.update(status=status, stopped_because=stopped_because, finished_at=_now())
        self._figures(stop)
        if self.config.expectations.any:  # read from the finished figures: the ceiling, the levels
            self.update(expectations=check(self.config.expectations, self.result.to_json()))
        self.save()
        return self.result.to_json()

    def _figures(self, stop: Stop | None = None) -> None:
        """The headline figures: the plan's (the ceiling, or the users held), and the most answers
        per second any level achieved."""
        levels = self.result.levels
        peak = max((level.achieved_rps for level in levels), default=None)
        outcomes = [outcome_of(level.to_json()) for level in levels]
        self.update(peak_rps=peak, **headline(self.config.plan.headline(outcomes, stop)))


def headline(figures: Mapping[str, Any]) -> dict[str, object]:
    """A plan's headline (`Plan.headline`: JSON data, the plans knowing no result) as the result
    types it: the ceiling or the users held as they are, a search's block as `SearchAsRun`."""
    search = figures.get("search")
    return {**figures, "search": SearchAsRun.from_json(search)} if search is not None else dict(figures)


@cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(RunResult)


def _parts_in(hint: Any) -> bool:
    """Whether a type hint holds a typed part (`Service`, `tuple[FaultRecord, ...]`, `X | None`)."""
    if isinstance(hint, type) and issubclass(hint, Part):
        return True
    return any(_parts_in(arg) for arg in typing.get_args(hint))


def _untyped(name: str, value: object) -> bool:
    """Whether `value`, for the result's field `name`, is JSON data where the field is a part."""
    if name not in _hints() or not _parts_in(_hints()[name]) or isinstance(value, Part):
        return False
    if isinstance(value, list):
        return True
    if isinstance(value, tuple):
        return any(not isinstance(item, Part) for item in value)
    return isinstance(value, Mapping)


INTERRUPTED = "interrupted by the user (Ctrl-C)"


def stop_words(exc: BaseException) -> tuple[str, str]:
    """The status and the reason a result ends with when `exc` stopped its run: "interrupted" for
    Ctrl-C, "refused" for a usage error (exit 2: the command, the config, the request file or its
    SQL on the app's data), "failed" for any other (a setup that failed, an app that never
    answered, a bug), the reason being the error's message on one line."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", INTERRUPTED
    message = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    if isinstance(exc, UsageError):
        return "refused", message
    if isinstance(exc, DbladderError):
        return "failed", message
    return "failed", f"{type(exc).__name__}: {message}" if message else type(exc).__name__


@contextlib.contextmanager
def ended_on_error(path: Path) -> Iterator[None]:
    """For the block (a whole round): when it raises after writing `path` and leaving it
    "running" (a request file's SQL refused after --app-setup, a setup that failed, a bug), the
    document is ended as it was last saved, its finished levels kept, with the status and the
    reason of `stop_words` and the time it finished; then the error goes on. A file the block did
    not write (an earlier run's in the same folder) is left as it is."""
    before = _identity(path)
    try:
        yield
    except BaseException as exc:
        if _identity(path) != before:
            _end(path, exc)
        raise


def _identity(path: Path) -> tuple[int, int, int] | None:
    """The file as it is on disk now (written again: a new inode, `write_json` replaces it), or None."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


def _end(path: Path, exc: BaseException) -> None:
    # Best effort: the error that stopped the run is the one to report, not one from here.
    with contextlib.suppress(OSError, ValueError):
        document = json.loads(path.read_text())
        if isinstance(document, dict) and document.get("status") == "running":
            status, because = stop_words(exc)
            document.update(status=status, stopped_because=because, finished_at=_now())
            write_json(path, document)


def outcome_of(row: dict[str, Any], excused: bool = False) -> Outcome:
    """A level's row as its plan sees it."""
    diagnosis = row.get("diagnosis") or {}
    return Outcome(
        row["offered_rps"],
        row["passed"],
        tuple(row["reasons"]),
        excused,
        row["achieved_rps"],
        row.get("users"),
        diagnosis.get("kind") == "stall",
        diagnosis.get("resource") if not row["passed"] else None,
        tuple((row.get("resource_shares") or {}).items()),
    )


def describe_load(config: RunConfig, workload: Workload, mix: Mix) -> str:
    """One line saying what load a round sends."""
    target = f"{workload.name}: {workload.write_share(mix):.0%} writes, target {config.target}"
    return f"{config.plan.describe()}, {target}"


def spike_figures(final: dict[str, Any], pass_mark: PassMark) -> Spike:
    """A spike ("Postgres vs MariaDB on two dedicated CPUs"): the seconds until p95 was back within
    20 % with failures under the pass mark's bound."""
    try:
        recovery = spike_recovery(final, max_fail_pct=pass_mark.max_fail_pct)
    except ValueError as exc:
        return Spike.from_json({"recovery_seconds": None, "note": str(exc)})
    return Spike.from_json({"recovery_seconds": recovery, "tolerance": 0.2})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def make_out_dir(path: Path) -> None:
    """Create the output folder, or UsageError saying why it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output folder {path}: {exc.strerror}") from None


def default_out_dir(root: Path = Path("results")) -> Path:
    """A new timestamped folder under `root`."""
    return root / datetime.now().strftime("%Y%m%d-%H%M%S")
