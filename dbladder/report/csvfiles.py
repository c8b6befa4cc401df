"""levels.csv and timeseries.csv: the figures as flat tables for a spreadsheet or pandas.

levels.csv has one row per level of every run: the run's engine label, run number and round,
then every figure of the level row with nested objects flattened (`sent_p95_ms`,
`machine_host_usr`); the histograms, the per-second series and lists of objects (each process's
figures, `machine_service_by_process`, each loop's states) stay in the JSON. A failure
cause that did not occur reads 0; a machine figure that was not measured stays empty.

timeseries.csv has one row per per-second sample (the sampler's flat rows), with the engine and
run columns first when the bundle holds several runs; a run writes beside each sample the level
second it falls in (`level`, `level_second`, `load_sent`, `load_p95_ms`...:
`result.seconds.beside_samples`). A run that was not sampled leaves only the
header.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .runs import RunInRound

RUN_COLUMNS = ("engine", "run", "round")
LEFT_IN_JSON = ("histograms", "seconds", "activity_seconds")
"""A level's series that levels.csv leaves in the JSON (the seconds are in timeseries.csv)."""
SAMPLE_RUN_COLUMNS = ("run_index", "engine", "run")
"""Columns that say which run a sample belongs to in a comparison's timeseries.csv."""


def _flat(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}_{key}" if prefix else str(key)
        if key in LEFT_IN_JSON and not prefix:
            continue
        if isinstance(value, Mapping):
            flat.update(_flat(value, name))
        elif isinstance(value, list | tuple):
            if any(isinstance(item, Mapping) for item in value):
                continue  # a list of objects (each process's figures, each loop's) stays in the JSON
            flat[name] = "; ".join(str(item) for item in value)
        else:
            flat[name] = value
    return flat


def _text(rows: Sequence[Mapping[str, Any]], first: Sequence[str] = ()) -> str:
    header = list(dict.fromkeys([*first, *(key for row in rows for key in row)]))
    stream = io.StringIO()
    writer = csv.DictWriter(stream, fieldnames=header or ["t"], lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return stream.getvalue()


def levels_csv(runs: Iterable[tuple[RunInRound, str]]) -> str:
    """levels.csv for (run, round title) pairs."""
    rows = []
    for run, round_title in runs:
        for level in run.levels:
            row = {"engine": run.label, "run": run.number, "round": round_title, **_flat(level.to_json())}
            rows.append(row)
    failure_keys = [
        key for key in dict.fromkeys(k for row in rows for k in row) if key.startswith("failures_")
    ]
    for row in rows:
        for key in failure_keys:
            row.setdefault(key, 0)
    return _text(rows, RUN_COLUMNS)


def timeseries_csv(samples: Sequence[Mapping[str, Any]]) -> str:
    """timeseries.csv from flat per-second samples (nested ones are flattened); header only when none."""
    rows = [_flat(sample) for sample in samples]
    first = [column for column in SAMPLE_RUN_COLUMNS if rows and column in rows[0]]
    return _text(rows, first or ["t"])


def read_timeseries(path: Path) -> list[dict[str, str]]:
    """The rows of a timeseries.csv (values as the text written), or none when the file is missing."""
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as stream:
        return [dict(row) for row in csv.DictReader(stream)]
