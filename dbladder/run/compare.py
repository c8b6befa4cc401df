"""`run_compare`: the same round against several databases, several times, from fresh data.

    for each database: seed once, keep a snapshot (FreshData)
    for run in 1..N: for each database in turn (A B C A B C ...):
        restore the data as seeded -> run_round -> keep its result
    -> compare.json (every run's result) -> reports

Engines alternate run by run so that a slow drift of the machine (another tenant, a warming
disk, a throttled CPU) is shared by all of them instead of landing on whichever ran last. The
verdict respects noise: the figures of one engine's runs give its spread, and a difference within
it is "about the same" (`dbladder.report.runs`). compare.json is rewritten after every run, so an
interrupted comparison keeps the runs it finished. A `managed:ENGINE` database is a throwaway
server started for the whole comparison and removed after it.

An entry is a database and how the load reaches it (`--transport`, `--added-latency`): the same
database may be an entry more than once with different routes ("PostgreSQL over its socket, over
TCP, over TCP + 2 ms"). Entries of one database share its data: it is seeded once, and every run
of every entry starts from it as seeded.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .. import __version__
from ..data.fresh import FreshData
from ..data.seeding import SeedReport, seed
from ..engines.base import Engine
from ..errors import DbladderError, InvalidConfig
from ..report.bundle import build_reports
from ..result.comparison import Comparison, per_database
from ..result.files import write_json
from ..result.run import Fresh, RunResult, WorkloadAsRun
from ..result.schema import COMPARE_SCHEMA
from ..servers import Database, ManagedServer, is_managed_spec, managed_server_for, parse_database
from ..types import JsonObject
from ..urls import DatabaseURL, parse_url
from ..workloads.base import DataSpec, Workload
from .agent_data import FreshDataOnAgent
from .config import RunConfig
from .document import make_out_dir, stop_words
from .place import data_cluster_for, place_for
from .progress import Progress, QuietProgress, seeding_pass
from .round import run_round
from .targets import TargetData, target_for
from .this_machine import LoadHere

if TYPE_CHECKING:
    from ..cluster.coordinator import Cluster

MAX_RUNS = 20


@dataclass(frozen=True)
class CompareConfig:
    """The round (`base`, whose db_url is replaced by each of `db_urls`), the runs, the output folder."""

    # Database URLs or managed:ENGINE texts; kept out of repr(): a URL may hold a password.
    db_urls: tuple[str, ...] = field(repr=False)
    base: RunConfig
    runs: int = 3
    out_dir: Path = Path("results")
    verify: bool = False  # checksum the data before every run (reads every row)
    # Per entry, in db_urls' order: its transport and its added latency (None: as the URL says,
    # no relay). Empty: none for any entry.
    transports: tuple[str | None, ...] = ()
    added_latencies: tuple[float | None, ...] = ()
    # Each of db_urls once parsed (`database`): the entries, their rounds and the runs of those
    # carry the parsed value instead of parsing the text again (the base's own parse included).
    parsed_databases: dict[str, Database] = field(default_factory=dict, repr=False, compare=False)

    @property
    def entries(self) -> list[Entry]:
        """Each database with the route its load takes."""
        count = len(self.db_urls)
        transports = self.transports or (None,) * count
        latencies = self.added_latencies or (None,) * count
        return [
            Entry(text, transport, latency, self.database(text))
            for text, transport, latency in zip(self.db_urls, transports, latencies, strict=False)
        ]

    def database(self, text: str) -> Database | None:
        """One of `db_urls` parsed, once for this config (the base's parse when it names the same
        database); None when it does not parse: `validate` says why, as a round says it."""
        parsed = self.parsed_databases.get(text)
        if parsed is None:
            known = self.base.parsed_database
            try:
                parsed = known if known is not None and known.raw == text else parse_database(text)
            except DbladderError:
                return None
            # A memo, not a change: the same texts, parsed.
            self.parsed_databases[text] = parsed
        return parsed

    def validate(self) -> list[str]:
        problems = []
        if not self.db_urls:
            problems.append("give at least one database (--db URL)")
        for name, values in (("transports", self.transports), ("added_latencies", self.added_latencies)):
            if values and len(values) != len(self.db_urls):
                problems.append(f"{name} must name one per database ({len(self.db_urls)}), not {len(values)}")
        if not 1 <= self.runs <= MAX_RUNS:
            problems.append(f"runs must be from 1 to {MAX_RUNS}, not {self.runs}")
        if self.base.seed is None:
            problems.append("a comparison starts every run from fresh data: it needs a seed")
        duplicates = [entry for entry, count in Counter(self.entries).items() if count > 1]
        for entry in duplicates:
            problems.append(
                f"the same database twice by the same route would be one entry twice: {entry.words}; "
                "give each --db of one database its own --transport or --added-latency"
            )
        for entry in self.entries or [Entry(self.base.db_url, database=self.base.parsed_database)]:
            for problem in self.run_config(entry).validate():
                if problem not in problems:
                    problems.append(problem)
        return problems

    def run_config(self, entry: Entry) -> RunConfig:
        """The round for one entry: its database (as parsed, when it parses) and its route."""
        return dataclasses.replace(
            self.base,
            db_url=entry.db_url,
            parsed_database=entry.database,
            transport=entry.transport,
            added_latency_ms=entry.added_latency_ms,
        )

    def checked(self) -> CompareConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self


@dataclass(frozen=True)
class Entry:
    """One entry of a comparison: a database and how the load reaches it."""

    db_url: str
    transport: str | None = None
    added_latency_ms: float | None = None
    # `db_url` parsed, when the caller has parsed it (CompareConfig.entries); not part of what
    # makes two entries the same, which is their text and route.
    database: Database | None = field(default=None, repr=False, compare=False)

    @property
    def parsed(self) -> Database:
        """`db_url` parsed: as the entry was given it, else now (BadURL when it does not parse)."""
        return self.database if self.database is not None else parse_database(self.db_url)

    @property
    def route(self) -> str:
        """The route in a label: "", "tcp", "tcp+2ms", "+0.5ms" (a latency over the URL's own transport)."""
        words = self.transport or ""
        if self.added_latency_ms is not None:
            words += f"+{self.added_latency_ms:g}ms"
        return words

    @property
    def words(self) -> str:
        return self.parsed.redacted + (f" ({self.route})" if self.route else "")


def labels_for(urls: tuple[str, ...] | list[Entry]) -> list[str]:
    """A short, unique, folder-safe label per entry: the engine and the route it was given
    ("postgresql-tcp+2ms"), numbered when the same label repeats."""
    entries = [entry if isinstance(entry, Entry) else Entry(entry) for entry in urls]
    names = [entry.parsed.engine + (f"-{entry.route}" if entry.route else "") for entry in entries]
    counts = Counter(names)
    seen: Counter[str] = Counter()
    labels = []
    for name in names:
        seen[name] += 1
        labels.append(name if counts[name] == 1 else f"{name}-{seen[name]}")
    return labels


def seeder(
    workload: Workload, data: DataSpec, progress: Progress, label: str, planned: dict[str, int]
) -> Callable[[Engine], Awaitable[SeedReport]]:
    """How FreshData seeds `label`'s database: every seeding (the first, a second one that the
    fastest method asks for, a re-seed before a run) counts its rows from 0 of its own total."""
    return lambda engine: seed(engine, workload, data, seeding_pass(progress, label, planned))


def run_compare(config: CompareConfig, progress: Progress | None = None) -> Comparison:
    """Run the comparison; the typed comparison (`result.comparison`), also written to
    `config.out_dir` as compare.json."""
    config = config.checked()
    progress = progress or QuietProgress()
    make_out_dir(config.out_dir)
    with contextlib.ExitStack() as stack:
        # The data's agent keeps each database's snapshot for the whole comparison (agent_data.py).
        cluster = stack.enter_context(data_cluster_for(config.base, progress))
        # One throwaway server per managed:ENGINE text, shared by the entries that name it.
        servers: dict[str, ManagedServer | None] = {}
        for text in dict.fromkeys(entry.db_url for entry in config.entries):
            if is_managed_spec(text):
                progress.message(f"starting a throwaway server for the comparison: {text}")
            servers[text] = stack.enter_context(
                managed_server_for(text, limits=config.base.placement.database)
            )
        return _run_compare(config, progress, servers, cluster)


def _run_compare(
    config: CompareConfig,
    progress: Progress,
    servers: dict[str, ManagedServer | None],
    cluster: Cluster | None = None,
) -> Comparison:
    labels = labels_for(config.entries)
    # A managed server's URL, parsed once for all the runs of its entries.
    server_urls = {text: parse_url(server.url) for text, server in servers.items() if server is not None}
    base = config.base
    workload = base.round_workload()
    target = target_for(base, LoadHere()).data  # what the load is sent to decides how the data is made
    # checked() refuses a comparison without a seed: every run starts from the data as seeded.
    data = DataSpec(cast(int, base.seed), workload.scaled_sizes(base.scale, base.sizes))
    sizes = ", ".join(f"{count:,} {name}" for name, count in data.sizes.items())
    planned = workload.planned_rows(data.sizes)
    data, sizes = target.comparison_data(data, sizes)
    document = ComparisonInProgress(config, labels)
    document.save()
    fresh: dict[str, FreshData | FreshDataOnAgent] = {}  # by database: its entries share its data
    prepared: dict[str, JsonObject] = {}
    try:
        for label, entry in zip(labels, config.entries, strict=True):
            url = _url_of(entry, server_urls)
            if entry.db_url not in fresh:
                # Seeded and restored where the data is (agent_data.py on a cluster).
                place = place_for(config.run_config(entry).with_url(url), cluster)
                progress.message(
                    f"{label}: seeding the {workload.name} workload once{place.data.data_words()}: {sizes}"
                )
                seeding = seeder(workload, data, progress, label, planned)
                make = target.data_maker(url, config.out_dir / f"app-setup-{label}.log", seeding)
                fresh[entry.db_url] = place.data.fresh_data(
                    label, url, base, workload, data, make, config.verify
                )
                preparation = asyncio.run(fresh[entry.db_url].prepare())
                progress.message(
                    f"{label}: every run gets its data by {preparation.method}{place.data.data_words()}"
                )
                prepared[entry.db_url] = preparation.to_dict()
            document.add_preparation(label, prepared[entry.db_url])
            document.save()
        interrupted = _runs(config, labels, document, fresh, target, data, servers, server_urls, progress)
        document.update(status="interrupted" if interrupted else "complete")
    except KeyboardInterrupt:
        document.update(status="interrupted")
    except BaseException as exc:  # the error goes on; the document says the comparison stopped on it
        document.update(status=stop_words(exc)[0])
        raise
    finally:
        for copies in fresh.values():
            asyncio.run(copies.cleanup())
        document.update(finished_at=_now())
        document.save()
    if document.comparison.runs:
        build_reports([config.out_dir], config.out_dir)
    return document.comparison


def _url_of(entry: Entry, server_urls: dict[str, DatabaseURL]) -> DatabaseURL:
    """The entry's database as every run and its data use it: its URL, or its server's."""
    database = server_urls.get(entry.db_url) or entry.parsed
    if not isinstance(database, DatabaseURL):  # a managed: spec whose server is started above
        raise TypeError(f"no server started for {entry.db_url}")
    return database


class ComparisonInProgress:
    """The comparison while it runs: its typed document (`result.comparison.Comparison`), each part
    replaced as it is made, and compare.json written from it (`save`) after every step."""

    def __init__(self, config: CompareConfig, labels: list[str]):
        self.path = config.out_dir / "compare.json"
        self.labels = labels
        # Read from the document as it starts, as a round's `Run` is: the part keeps these keys in
        # this order (a route not given written as null), and a key given later goes after them.
        self.comparison = Comparison.from_json(
            {
                "schema": COMPARE_SCHEMA,
                "kind": "compare",
                "dbladder_version": __version__,
                "created_at": _now(),
                "status": "running",
                "databases": [
                    {
                        "label": label,
                        "db_url": entry.parsed.redacted,
                        "transport": entry.transport,
                        "added_latency_ms": entry.added_latency_ms,
                    }
                    for label, entry in zip(labels, config.entries, strict=True)
                ],
                "runs_per_database": config.runs,
                "preparation": {},
                "runs": [],
            }
        )

    def update(self, **fields: object) -> None:
        """Set fields of the comparison, each as `Comparison` types it."""
        self.comparison = self.comparison.updated(fields)

    def add_preparation(self, label: str, preparation: JsonObject) -> None:
        """How `label`'s database was made ready for its runs (`FreshData.prepare`)."""
        self.update(preparation={**(self.comparison.preparation or {}), label: preparation})

    def add_run(self, result: RunResult, expected: bool) -> None:
        """A run's result, and (`expected`: some --expect-* given) each database's expectations
        over its runs so far."""
        self.update(runs=(*self.comparison.runs, result))
        if expected:
            outcomes = per_database(self.labels, self.comparison.runs)
            databases = self.comparison.databases or ()
            self.update(
                databases=tuple(
                    database.updated({"expectations": outcome})
                    for database, outcome in zip(databases, outcomes, strict=True)
                )
            )

    def save(self) -> None:
        write_json(self.path, self.comparison.to_json())


def _runs(
    config: CompareConfig,
    labels: list[str],
    document: ComparisonInProgress,
    fresh: dict[str, FreshData | FreshDataOnAgent],
    target: TargetData,
    data: DataSpec,
    servers: dict[str, ManagedServer | None],
    server_urls: dict[str, DatabaseURL],
    progress: Progress,
) -> bool:
    """Every run of every database, in turn, each on its data restored; whether one was interrupted."""
    for number in range(1, config.runs + 1):
        for label, entry in zip(labels, config.entries, strict=True):
            progress.message(f"run {number} of {config.runs}: {label}")
            start = asyncio.run(fresh[entry.db_url].before_run())
            run_config = dataclasses.replace(
                target.rerun(config.run_config(entry).with_url(_url_of(entry, server_urls))),
                out_dir=config.out_dir / f"{label}-run{number}",
            )
            returned = run_round(run_config, progress, servers[entry.db_url])
            fields = {"label": label, "run": number, "fresh": Fresh.from_json(start.to_dict())}
            result = _as_restored(returned, data).updated(fields)
            write_json(run_config.out_dir / "result.json", result.to_json())
            document.add_run(result, config.base.expectations.any)
            document.save()
            if result.status == "interrupted":
                return True
    return False


def _as_restored(result: RunResult, data: DataSpec) -> RunResult:
    """A comparison's run as it was: on the seeded data as restored, not on data it seeded itself."""
    workload = cast(WorkloadAsRun, result.workload)  # every round describes its workload
    return result.updated(
        {
            "config": result.config.updated({"seed": data.seed}),
            "workload": workload.updated({"data": data.to_dict()}),
        }
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
