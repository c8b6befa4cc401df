"""A level second by second: the rows of its measured window, from the recorder's merged seconds.

The recorder (`load/recorder.py`, `LevelSecond`) keeps, per second of a level's measured window
(a last part-second included: every request due in the window is in exactly one second), the
requests due in it that were sent and those dropped, the answers that arrived in it, the requests
due in it that failed, and a histogram of the latency from the due time of its successful
answers; the fleet merges them across processes as it merges levels. A result row keeps only the
figures, not the histograms (a few dozen bytes a second), so a long search stays small:

    t        seconds into the measured window (0, 1, ...)
    length_s                       1, or less for the window's last part-second: its counts are
                                   that part's, to be read as rates over it, not as a drop
    sent dropped answered failed   dropped: None in a snapshot from before it was kept
    p50_ms p95_ms p99_ms max_ms    of the successful answers due in that second; None without any
    lag_max_ms                     the largest schedule lag of the requests due in it that were
                                   sent (None in a result from before it was kept)

A result of schema `dbladder.result/2` kept whole seconds only, no `length_s` (read as 1) and no
`dropped`: the requests due in its last part-second were in no row.

`diagnosis_seconds` reads them back as `result.diagnosis.Second`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..histogram import Histogram
from .diagnosis import Second

SECOND_KEYS = (
    "t",
    "length_s",
    "sent",
    "dropped",
    "answered",
    "failed",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "lag_max_ms",
)
"""The keys of one second's row, in the order timeseries.csv writes them."""


def second_rows(seconds: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of a level's merged seconds (`merge.merge_seconds`)."""
    rows = []
    for t, second in enumerate(seconds):
        latency = Histogram.from_dict(second["latency_from_due"])
        row: dict[str, Any] = {"t": t, "length_s": second.get("length_s", 1.0), "sent": second["sent"]}
        row |= {"dropped": second.get("dropped"), "answered": second["answered"], "failed": second["failed"]}
        if latency.count:
            p50, p95, p99 = latency.percentiles([50, 95, 99])
            row |= {"p50_ms": p50 / 1000, "p95_ms": p95 / 1000, "p99_ms": p99 / 1000}
            row["max_ms"] = latency.max / 1000
        else:
            row |= dict.fromkeys(("p50_ms", "p95_ms", "p99_ms", "max_ms"))
        lag = second.get("lag_max_us")
        row["lag_max_ms"] = lag / 1000 if lag is not None else None
        rows.append(row)
    return rows


def diagnosis_seconds(rows: Sequence[dict[str, Any]]) -> list[Second]:
    """A level's second rows as the diagnosis reads them."""
    return [
        Second(
            row["sent"],
            row["answered"],
            row["failed"],
            row["p95_ms"],
            row["max_ms"],
            row.get("length_s", 1.0),
        )
        for row in rows
    ]


def beside_samples(
    samples: Sequence[dict[str, Any]], levels: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The machine's per-second samples (rows of timeseries.csv, "t" the end of each on the run's
    clock) with the level second each one's middle falls in: `level` (1 for the first),
    `level_second` and that second's figures as `load_<key>` (`load_length_s` below 1 for the
    window's last part-second); a sample outside every measured window keeps only its own columns."""
    windows = [
        (level["start_s"] + level["warmup_s"], level["index"], level.get("seconds") or []) for level in levels
    ]
    joined = []
    for sample in samples:
        row = dict(sample)
        middle = float(sample["t"]) - float(sample.get("interval") or 0) / 2
        for start, index, seconds in windows:
            number = int(middle - start) if middle >= start else -1
            if 0 <= number < len(seconds) and middle - start < number + seconds[number].get("length_s", 1.0):
                row |= {"level": index + 1, "level_second": number}
                row |= {f"load_{key}": value for key, value in seconds[number].items() if key != "t"}
                break
        joined.append(row)
    return joined
