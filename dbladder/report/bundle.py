"""Result bundles: the folder every run (or comparison) leaves, and the reports rebuilt from it.

    D/result.json      the result (or compare.json: several results side by side)
    D/levels.csv       one row per level of every run
    D/timeseries.csv   one row per per-second sample (header only when the machine was not sampled)
    D/report.md        the report as Markdown
    D/report.html      the report as one self-contained page with its plots

Reports are built from the files only: `write_bundle` writes the JSON and the samples first and
then renders what `load_bundle` reads back, the same path `dbladder report` takes later.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import CorruptBundle, MissingBundle, UsageError
from ..result.documents import COMPARE_SCHEMA, RESULT_SCHEMAS_READ, check_document, compare_runs, kept_samples
from ..result.run import RunResult
from . import csvfiles, document, html, markdown
from .runs import rounds_of

RESULT = "result.json"
COMPARE = "compare.json"
LEVELS = "levels.csv"
TIMESERIES = "timeseries.csv"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"


@dataclass(frozen=True)
class Bundle:
    """A bundle as read from disk: its runs and, for each run, its per-second samples."""

    path: Path  # the folder
    kind: str  # "result" or "compare"
    runs: list[dict[str, Any]]  # each run's document as read (checked against its schema)
    samples: list[list[dict[str, Any]]]  # parallel to runs
    # compare.json as read, with whatever its writer added beside `runs` (`dbladder compare`'s
    # databases, preparation, status), so rebuilding its reports keeps them; None for a result.
    document: dict[str, Any] | None = None

    @cached_property
    def results(self) -> list[RunResult]:
        """The runs as typed results, which the reports read."""
        return [RunResult.from_json(run) for run in self.runs]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptBundle(f"{path} is not valid JSON ({exc}); was it cut short?") from None
    except OSError as exc:
        raise CorruptBundle(f"cannot read {path}: {exc.strerror}") from None


def _checked(data: Any, path: Path, expected: tuple[str, ...]) -> None:
    known = f"{' or '.join(RESULT_SCHEMAS_READ)} in {RESULT}, {COMPARE_SCHEMA} in {COMPARE}"
    check_document(data, str(path), expected, known)


def load_bundle(path: Path) -> Bundle:
    """Read and check a bundle: a folder holding result.json or compare.json, or either file itself.

    Raises MissingBundle (no such bundle), CorruptBundle (unreadable, or not matching its schema) or
    UnknownBundleVersion (written under a schema version this release does not read).
    """
    folder = path.parent if path.is_file() else path
    if path.is_file() and path.name not in (RESULT, COMPARE):
        raise MissingBundle(f"{path} is not a bundle: give its folder, or its {RESULT} or {COMPARE}")
    if not folder.is_dir():
        raise MissingBundle(f"no bundle at {path}: no such folder")
    if (folder / RESULT).is_file() and path.name != COMPARE:
        data = _read_json(folder / RESULT)
        _checked(data, folder / RESULT, RESULT_SCHEMAS_READ)
        samples = csvfiles.read_timeseries(folder / TIMESERIES) or kept_samples(data)
        return Bundle(folder, "result", [data], [samples])
    if (folder / COMPARE).is_file():
        data = _read_json(folder / COMPARE)
        _checked(data, folder / COMPARE, (COMPARE_SCHEMA,))
        runs = compare_runs(data, str(folder / COMPARE))
        by_run: list[list[dict[str, Any]]] = [[] for _ in runs]
        for row in csvfiles.read_timeseries(folder / TIMESERIES):
            index = int(row.get("run_index") or 0)
            if 0 <= index < len(by_run):
                by_run[index].append({k: v for k, v in row.items() if k not in csvfiles.SAMPLE_RUN_COLUMNS})
        return Bundle(folder, "compare", runs, by_run, data)
    raise MissingBundle(f"{folder} is not a bundle: it holds neither {RESULT} nor {COMPARE}")


def _write_text(path: Path, text: str) -> None:
    """Write a file atomically, as result.json is: a reader never sees half a report."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file private (0600); a report is for sharing.
        os.fchmod(handle, 0o644)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """JSON in result.json's layout (`result.files.write_json`), readable by others like the reports."""
    _write_text(path, json.dumps(data, indent=2) + "\n")


def _write_reports(bundle: Bundle, out_dir: Path) -> list[Path]:
    """levels.csv, report.md and report.html of a loaded bundle's runs."""
    rounds = rounds_of(bundle.results)
    runs = [(run, round_.title) for round_ in rounds for run in round_.runs]
    count = sum(len(samples) for samples in bundle.samples)
    report = document.build(bundle.results, count)
    written = []
    for name, text in (
        (LEVELS, csvfiles.levels_csv(runs)),
        (REPORT_MD, markdown.render(report)),
        (REPORT_HTML, html.render(report)),
    ):
        _write_text(out_dir / name, text)
        written.append(out_dir / name)
    return written


def _mkdir(out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output folder {out_dir}: {exc.strerror}") from None


def write_bundle(
    result: dict[str, Any], out_dir: Path, samples: list[dict[str, Any]] | None = None
) -> list[Path]:
    """Complete a run's bundle in `out_dir`: result.json, timeseries.csv, levels.csv, report.md, report.html.

    `samples` are the run's per-second samples (flat dicts); without them, `result["timeseries"]`
    is used when present, else timeseries.csv has its header only. result.json is (re)written from
    `result`, then everything else is rendered from the files, as `dbladder report` would.
    Returns the paths written.
    """
    _mkdir(out_dir)
    _write_json(out_dir / RESULT, result)
    rows = samples if samples is not None else kept_samples(result)
    _write_text(out_dir / TIMESERIES, csvfiles.timeseries_csv(rows))
    bundle = load_bundle(out_dir)
    return [out_dir / RESULT, out_dir / TIMESERIES, *_write_reports(bundle, out_dir)]


def build_reports(bundles: Sequence[Path], out_dir: Path) -> list[Path]:
    """Rebuild reports from bundles on disk (`dbladder report`). Returns the paths written.

    One result bundle: its reports, in the bundle itself or in `out_dir` (which then gets a copy of
    result.json and timeseries.csv, so it is a complete bundle too). Several bundles (or one
    compare bundle): one comparison in `out_dir`, written as compare.json with its reports.
    """
    if not bundles:
        raise UsageError("give at least one bundle (a folder with result.json)")
    loaded = [load_bundle(Path(path)) for path in bundles]
    _mkdir(out_dir)
    if len(loaded) == 1 and loaded[0].kind == "result":
        single = loaded[0]
        written = []
        if out_dir.resolve() != single.path.resolve():
            shutil.copyfile(single.path / RESULT, out_dir / RESULT)
            (out_dir / RESULT).chmod(0o644)
            written.append(out_dir / RESULT)
        _write_text(out_dir / TIMESERIES, csvfiles.timeseries_csv(single.samples[0]))
        return [*written, out_dir / TIMESERIES, *_write_reports(single, out_dir)]
    if (out_dir / RESULT).exists():
        raise UsageError(
            f"{out_dir} holds a single run's {RESULT}: write the comparison to a folder of its own (--out)"
        )
    document = loaded[0].document if len(loaded) == 1 else None
    if document is not None:
        # One comparison: its compare.json stays as its writer left it (in place, untouched).
        single = loaded[0]
        written = []
        if out_dir.resolve() != single.path.resolve():
            _write_json(out_dir / COMPARE, document)
            written.append(out_dir / COMPARE)
        _write_text(out_dir / TIMESERIES, csvfiles.timeseries_csv(_tagged_samples(single)))
        return [*written, out_dir / TIMESERIES, *_write_reports(load_bundle(out_dir / COMPARE), out_dir)]
    runs = [run for bundle in loaded for run in bundle.runs]
    samples = [per_run for bundle in loaded for per_run in bundle.samples]
    comparison = Bundle(out_dir, "compare", runs, samples)
    _write_json(
        out_dir / COMPARE,
        {
            "schema": COMPARE_SCHEMA,
            "kind": "compare",
            "dbladder_version": __version__,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "runs": runs,
        },
    )
    _write_text(out_dir / TIMESERIES, csvfiles.timeseries_csv(_tagged_samples(comparison)))
    return [out_dir / COMPARE, out_dir / TIMESERIES, *_write_reports(load_bundle(out_dir / COMPARE), out_dir)]


def _tagged_samples(bundle: Bundle) -> list[dict[str, Any]]:
    """Every run's samples in one list, each row saying which run it belongs to."""
    names = {id(run.result): run for round_ in rounds_of(bundle.results) for run in round_.runs}
    rows = []
    for index, (result, samples) in enumerate(zip(bundle.results, bundle.samples, strict=True)):
        view = names[id(result)]
        rows += [
            {"run_index": index, "engine": view.label, "run": view.number, **sample} for sample in samples
        ]
    return rows
