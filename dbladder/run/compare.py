"""`run_compare`: the same round against several databases, several times, from fresh data.

    for each database: seed once, keep a snapshot (FreshData)
    for run in 1..N: for each database in turn (A B C A B C ...):
        restore the data as seeded -> run_ladder -> keep its result
    -> compare.json (every run's result) -> reports

Engines alternate run by run so that a slow drift of the machine (another tenant, a warming
disk, a throttled CPU) is shared by all of them instead of landing on whichever ran last. The
verdict respects noise: the figures of one engine's runs give its spread, and a difference within
it is "about the same" (`dbladder.report.runs`). compare.json is rewritten after every run, so an
interrupted comparison keeps the runs it finished.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from .. import __version__
from ..data.fresh import FreshData
from ..errors import InvalidConfig
from ..report.bundle import build_reports
from ..result.files import write_json
from ..urls import parse_url
from ..workloads import shop
from .round import Progress, QuietProgress, RunConfig, make_out_dir, run_ladder

COMPARE_SCHEMA = "dbladder.compare/1"
MAX_RUNS = 20


@dataclass(frozen=True)
class CompareConfig:
    """The round (`base`, whose db_url is replaced by each of `db_urls`), the runs, the output folder."""

    db_urls: tuple[str, ...]
    base: RunConfig
    runs: int = 3
    out_dir: Path = Path("results")
    verify: bool = False  # checksum the data before every run (reads every row)

    def validate(self) -> list[str]:
        problems = []
        if not self.db_urls:
            problems.append("give at least one database (--db URL)")
        if not 1 <= self.runs <= MAX_RUNS:
            problems.append(f"runs must be from 1 to {MAX_RUNS}, not {self.runs}")
        if self.base.seed is None:
            problems.append("a comparison starts every run from fresh data: it needs a seed config")
        duplicates = [url for url, count in Counter(self.db_urls).items() if count > 1]
        if duplicates:
            problems.append(f"the same database twice would share its data: {', '.join(duplicates)}")
        for url in self.db_urls or (self.base.db_url,):
            for problem in dataclasses.replace(self.base, db_url=url).validate():
                if problem not in problems:
                    problems.append(problem)
        return problems

    def checked(self) -> CompareConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self


def labels_for(urls: tuple[str, ...]) -> list[str]:
    """A short, unique, folder-safe label per database: the engine, numbered when it repeats."""
    engines = [parse_url(url).engine for url in urls]
    counts = Counter(engines)
    seen: Counter[str] = Counter()
    labels = []
    for engine in engines:
        seen[engine] += 1
        labels.append(engine if counts[engine] == 1 else f"{engine}-{seen[engine]}")
    return labels


def run_compare(config: CompareConfig, progress: Progress | None = None) -> dict[str, Any]:
    """Run the comparison; its compare.json content (also written to `config.out_dir`)."""
    config = config.checked()
    progress = progress or QuietProgress()
    make_out_dir(config.out_dir)
    labels = labels_for(config.db_urls)
    seed = cast(shop.SeedConfig, config.base.seed)  # checked() refuses a comparison without one
    document: dict[str, Any] = {
        "schema": COMPARE_SCHEMA,
        "kind": "compare",
        "dbladder_version": __version__,
        "created_at": _now(),
        "status": "running",
        "databases": [
            {"label": label, "db_url": parse_url(url).redacted}
            for label, url in zip(labels, config.db_urls, strict=True)
        ],
        "runs_per_database": config.runs,
        "preparation": {},
        "runs": [],
    }
    path = config.out_dir / "compare.json"
    write_json(path, document)
    fresh: dict[str, FreshData] = {}
    try:
        for label, url in zip(labels, config.db_urls, strict=True):
            progress.message(f"{label}: seeding {seed.products:,} products and {seed.orders:,} orders once")
            data = FreshData(url, seed, verify=config.verify, progress=_seeding(progress, seed))
            fresh[label] = data
            preparation = asyncio.run(data.prepare())
            document["preparation"][label] = preparation.to_dict()
            progress.message(f"{label}: every run gets its data by {preparation.method}")
            write_json(path, document)
        interrupted = False
        for number in range(1, config.runs + 1):
            for label, url in zip(labels, config.db_urls, strict=True):
                progress.message(f"run {number} of {config.runs}: {label}")
                start = asyncio.run(fresh[label].before_run())
                run_config = dataclasses.replace(
                    config.base, db_url=url, seed=None, out_dir=config.out_dir / f"{label}-run{number}"
                )
                result = run_ladder(run_config, progress)
                result.update(label=label, run=number, fresh=start.to_dict())
                # The run used the seeded data as restored, not data it seeded itself: say which.
                result["config"]["seed"] = dataclasses.asdict(seed)
                write_json(run_config.out_dir / "result.json", result)
                document["runs"].append(result)
                write_json(path, document)
                if result["status"] == "interrupted":
                    interrupted = True
                    break
            if interrupted:
                break
        document["status"] = "interrupted" if interrupted else "complete"
    except KeyboardInterrupt:
        document["status"] = "interrupted"
    finally:
        for data in fresh.values():
            asyncio.run(data.cleanup())
        document["finished_at"] = _now()
        write_json(path, document)
    if document["runs"]:
        build_reports([config.out_dir], config.out_dir)
    return document


def _seeding(progress: Progress, seed: shop.SeedConfig) -> Callable[[str, int], None]:
    planned = seed.planned_rows()
    return lambda table, rows: progress.seeding(table, rows, planned)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
