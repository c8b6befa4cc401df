"""A round's configuration (`RunConfig`): everything a round needs, checked all at once.

`validate()` names every problem with its field; the database URL is parsed once here
(`RunConfig.database`) and the parsed value is what the run asks about its engine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..app.process import AppCommand
from ..app.workload import app_workload
from ..engine_registry import engine_setting_problems, settings_with_defaults, writer_processes
from ..engines.base import DEFAULT_POOL_SIZE
from ..errors import DbladderError, InvalidConfig, UsageError
from ..plans import Plan, Search, plan_to_config
from ..result.expectations import Expectations
from ..result.passmark import PassMark
from ..roles import Placement
from ..servers import Database, parse_database
from ..urls import DatabaseURL, is_loopback
from ..workloads.base import Workload
from ..workloads.registry import DEFAULT_WORKLOAD, load_workload
from .database_route import route_problems
from .faults import (
    fault_problems,
    parse_faults,
)
from .role_groups import placement_problems

TARGETS = ("http", "direct")

SEARCH_PLAN = "search"
"""The name a result gives the ceiling search as its preset: it is the plan when no preset is given."""


@dataclass(frozen=True)
class RunConfig:
    """Everything a round needs; `validate()` reports every problem at once."""

    # A database URL, or managed:ENGINE[?settings] for a server started for the round. Kept out of
    # repr(): it may hold a password.
    db_url: str = field(default="sqlite:///shop.db", repr=False)
    # The web app: a workload name, a .py file or module:attr (dbladder.workloads.registry).
    workload: str = DEFAULT_WORKLOAD
    # The plan (dbladder.plans): a ladder, users (the closed model of "Postgres vs MariaDB on two
    # dedicated CPUs") or the ceiling search, the default of `dbladder run`. `preset` names it in
    # the result.
    preset: str | None = None
    plan: Plan = field(default_factory=Search)
    # The share of requests that are writes; None keeps the workload's own weights.
    write_share: float | None = None
    # Operation weights by name, instead of the workload's; with write_share, rescaled to it.
    weights: dict[str, float] | None = None
    pass_mark: PassMark = field(default_factory=PassMark)
    # The data set's seed; None: use the data already in the database (its sizes are read from it).
    seed: int | None = 1
    # The workload's default sizes times `scale`, with `sizes` set as given (e.g. {"orders": 5000}).
    scale: float = 1.0
    sizes: dict[str, int] = field(default_factory=dict)
    target: str = "http"
    workers: int = 2
    pool_size: int = DEFAULT_POOL_SIZE
    # The engine's run settings by key, as its registration declares them (`dbladder.engine_registry`):
    # SQLite's one writer ("sqlite_writers": 1). {} keeps each at its default; result.json has them
    # all, each under its own key.
    engine_settings: dict[str, int] = field(default_factory=dict)
    # 0: sized to the machine (`generator_processes()`): in direct mode one process per core when
    # the engine runs inside the generator (SQLite), half the cores for a server on this host, whose
    # backends need cores of their own; one process over HTTP, where the service has the cores.
    generator_processes: int = 0
    in_flight: int = 1000  # per generator process
    timeout: float = 5.0  # per request, seconds
    precise_clock: bool = False
    syscalls: bool = False  # count system calls per process group for a few seconds per level
    continue_after_fail: bool = False
    out_dir: Path = Path("results")
    service_host: str = "127.0.0.1"
    # A service already running (http://host:port): the load goes there and nothing is started.
    # The database URL is still needed, to seed it and to size the mix to its data.
    service_url: str | None = None
    allow_remote_target: bool = False
    # A Dask scheduler (tcp://host:port) whose load agents send the load (dbladder.cluster):
    # None, the load is sent from this machine.
    cluster: str | None = None
    # The folder of the cluster's TLS files (ca.pem, cert.pem, key.pem; dbladder.cluster.security):
    # None, the control plane goes in clear, to a loopback or private address only.
    cluster_tls: Path | None = None
    mix_seed: int = 1
    # Faults to cause during the load, as KIND@LEVEL[:SECOND] (faults.py).
    faults: tuple[str, ...] = ()
    # After a run with writes: every acknowledged write looked up, the invariants checked.
    integrity: bool = True
    # How the load reaches the database (run/database_route.py): None keeps the URL's own way; with
    # added_latency_ms the load goes through the latency relay (0: the relay adding nothing).
    transport: str | None = None
    added_latency_ms: float | None = None
    # Each role's CPUs and memory cap, and whether the page cache is dropped first (dbladder.roles).
    placement: Placement = field(default_factory=Placement)
    # The user's own app (`--app` and its options, dbladder.app) and its request file (`--requests`):
    # the round starts the app on its database instead of dbladder's service and sends the file's
    # requests; the app's setup makes its data, so nothing is seeded.
    app: AppCommand | None = None
    requests_file: Path | None = None
    # Seconds the warm-up before the first level may take (run/warm_up.py): every request once,
    # each value of a Param.rows path parameter once, then each request until its latency settles.
    # None: no warm-up (dbladder's service runs cold, as its published rounds were taken; the CLI
    # gives an app DEFAULT_APP_WARMUP_S unless --no-app-warmup).
    warm_up_s: float | None = None
    # The search's first probe calibrated on the warm service (dbladder.load.calibration) instead
    # of `plan.start`: the CLI asks it for an app's search without --start.
    calibrate: bool = False
    # What the result must show (`--expect-*`): checked as the run finishes, into its `expectations`.
    expectations: Expectations = field(default_factory=Expectations)
    # Each setting as the caller was given it and where from (the command line, the environment,
    # the config file, the default), for the result's `settings`; never a password.
    settings: dict[str, Any] | None = field(default=None, compare=False)

    # `db_url` once parsed (`database`), kept in a field so that every copy `dataclasses.replace`
    # makes of the config (the round makes several) carries it instead of parsing the text again.
    parsed_database: Database | None = field(default=None, repr=False, compare=False)

    @property
    def database(self) -> Database:
        """`db_url` parsed, once for this config and its copies: what the run asks about the
        database (its engine's kind, its file, its host); BadURL or another UsageError when it
        does not parse."""
        parsed = self.parsed_database
        if parsed is None or parsed.raw != self.db_url:
            parsed = parse_database(self.db_url)
            # A memo, not a change: the same URL, parsed. The config stays frozen to its users.
            object.__setattr__(self, "parsed_database", parsed)
        return parsed

    def with_url(self, url: DatabaseURL) -> RunConfig:
        """This config on another database URL, already parsed (a managed server's, another
        transport's or the latency relay's)."""
        return replace(self, db_url=url.raw, parsed_database=url)

    @property
    def url(self) -> DatabaseURL:
        """The parsed database URL the round's steps use: by then a `managed:` spec has given way to
        its server's URL (`run_round`); UsageError before that."""
        database = self.database
        if not isinstance(database, DatabaseURL):
            raise UsageError(f"{self.db_url} names a server to start, not yet a database URL")
        return database

    def validate(self) -> list[str]:
        problems: list[str] = []
        database: Database | None = None
        try:
            database = self.database
        except DbladderError as exc:
            problems.append(f"db: {exc}")
        engine = database.engine if database is not None else None
        problems += self.plan.validate()
        problems += self.pass_mark.validate()
        problems += self._app_problems()
        problems += self._warm_up_problems()
        problems += self.expectations.validate()
        problems += self._workload_problems()
        if self.target not in TARGETS:
            problems.append(f"target must be one of {', '.join(TARGETS)}, not {self.target!r}")
        url = database if isinstance(database, DatabaseURL) else self.db_url
        problems += route_problems(url, self.transport, self.added_latency_ms, self.service_url)
        for name, low, high in (
            ("workers", 1, 64),
            ("generator_processes", 0, 64),
            ("in_flight", 1, 100_000),
            ("pool_size", 1, 10_000),
        ):
            value = getattr(self, name)
            if not low <= value <= high:
                problems.append(f"{name} must be from {low} to {high}, not {value}")
        problems += engine_setting_problems(
            self.engine_settings, database.kind if database is not None else None
        )
        if not self.timeout > 0:
            problems.append(f"timeout must be above 0 seconds, not {self.timeout}")
        problems += self._cluster_problems()
        service = None
        if self.service_url is not None:
            try:
                service = parse_service_url(self.service_url)
            except UsageError as exc:
                problems.append(str(exc))
            if self.target != "http":
                problems.append("service_url goes with target http, not direct")
        if not self.allow_remote_target:
            if service is not None and not is_loopback(service[0]):
                problems.append(
                    f"the service at {self.service_url} is not on a loopback address; "
                    "load goes to loopback only unless --allow-remote-target is given"
                )
            if not is_loopback(self.service_host):
                problems.append(
                    f"the service would listen on {self.service_host}, which is not a loopback address; "
                    "load goes to loopback only unless --allow-remote-target is given"
                )
            host = database.host if database is not None else None
            if self.target == "direct" and host and not is_loopback(host):
                problems.append(
                    f"direct mode would send load to {host}, which is not a loopback address; "
                    "give --allow-remote-target to allow it"
                )
        problems += self._fault_problems(engine)
        problems += placement_problems(self.placement, self.db_url, self.target, self.service_url)
        return problems

    def _workload_problems(self) -> list[str]:
        """The workload's: it loads, the seed, scale and sizes, the mix, the expectations' operations."""
        try:
            workload = self.round_workload()
        except DbladderError as exc:
            return [str(exc)]
        problems: list[str] = []
        if self.seed is not None and not (isinstance(self.seed, int) and 0 <= self.seed < 2**63):
            problems.append(f"seed must be a whole number from 0 to 2**63-1, not {self.seed!r}")
        if not (isinstance(self.scale, int | float) and 0 < self.scale <= 10_000):
            problems.append(f"scale must be above 0 and at most 10,000, not {self.scale!r}")
        elif self.app is None:
            problems += workload.validate_sizes(workload.scaled_sizes(self.scale, self.sizes))
        operations = [operation.name for operation in workload.operations]
        problems += self.expectations.operation_problems(workload.name, operations)
        try:
            workload.mix(self.write_share, self.weights)
        except InvalidConfig as exc:
            problems += exc.problems
        return problems

    def _cluster_problems(self) -> list[str]:
        """The cluster's: its address and TLS, and a route this machine would make for agents."""
        if self.cluster is None:
            if self.cluster_tls is not None:
                return ["cluster_tls (--tls) goes with cluster (--cluster), which is not given"]
            return []
        problems = cluster_address_problems(
            self.cluster, self.cluster_tls, "the run's coordinator would connect to the scheduler"
        )
        if self.target == "direct" and (self.transport is not None or self.added_latency_ms is not None):
            problems.append(
                "added latency and transport (--transport) go with the service's route, not with "
                "cluster direct mode (--cluster --target direct): the load agents connect to the "
                "database from their own machines, where this machine's relay or socket is not"
            )
        return problems

    def round_workload(self) -> Workload:
        """The workload the round sends: the app's request file with --app, else --workload's."""
        if self.app is not None and self.requests_file is not None:
            return app_workload(self.requests_file)
        return load_workload(self.workload)

    def _app_problems(self) -> list[str]:
        if self.app is None:
            return (
                ["--requests needs --app: the request file is sent to the app dbladder starts"]
                if (self.requests_file is not None)
                else []
            )
        problems = self.app.problems()
        if self.requests_file is None:
            problems.append("--app needs --requests FILE.py: what to send to the app")
        if self.target != "http":
            problems.append("--app is reached over HTTP: it goes with target http, not direct")
        if self.service_url is not None:
            problems.append("--app starts the app; --service sends to one already running: give one")
        if self.app.host != self.service_host:
            problems.append(f"--app listens on {self.app.host}, the service host is {self.service_host}")
        return problems

    def _warm_up_problems(self) -> list[str]:
        problems = []
        seconds = self.warm_up_s
        if seconds is not None:
            number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
            if not (number and 0 < seconds <= 3600):
                problems.append(f"--app-warmup must be above 0 and at most 3,600 seconds, not {seconds}")
            if self.target != "http":
                problems.append("the warm-up (--app-warmup) is sent over HTTP: it goes with target http")
        if self.calibrate:
            if self.plan.start_range() is None:
                problems.append("a calibrated start goes with the ceiling search, not a preset's plan")
            if self.target != "http":
                problems.append("a calibrated start is measured over HTTP: it goes with target http")
        return problems

    def _fault_problems(self, engine: str | None) -> list[str]:
        if not self.faults:
            return []
        try:
            faults = parse_faults(self.faults)
            levels = self.plan.scheduled()
        except DbladderError as exc:
            return [str(exc)]
        if not levels:
            return [
                "--fault needs a ladder or users plan (--preset NAME): a search's probes and their "
                "timing are not known before the run"
            ]
        parsed = self.parsed_database  # what validate() parsed: no second parse for a fault's check
        return fault_problems(
            faults,
            db_url=parsed if isinstance(parsed, DatabaseURL) else self.db_url,
            target=self.target,
            service_url=self.service_url,
            writer_processes=writer_processes(self.engine_settings),
            levels=levels,
            engine=engine,
            on_agents=self.cluster is not None,
        )

    def checked(self) -> RunConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, value in asdict(self).items():
            # The plan under its kind's key, as results have always kept it; each engine setting
            # under its own.
            if name == "plan":
                data.update(plan_to_config(self.plan))
            elif name == "engine_settings":
                data.update(settings_with_defaults(self.engine_settings))
            else:
                data[name] = value
        data["sizes"] = dict(self.sizes)
        data["db_url"] = self.database.redacted
        data["faults"] = list(self.faults)
        data["out_dir"] = str(self.out_dir)
        data["cluster_tls"] = str(self.cluster_tls) if self.cluster_tls is not None else None
        data["placement"] = self.placement.describe()
        data["app"] = self.app.describe() if self.app is not None else None
        data["requests_file"] = str(self.requests_file) if self.requests_file is not None else None
        # The result's own blocks, not part of the round's config.
        del data["settings"], data["expectations"], data["parsed_database"]
        return data


def parse_service_url(url: str) -> tuple[str, int]:
    """(host, port) of an http://host:port service URL, or UsageError saying what is wrong."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None or parts.path not in ("", "/"):
        raise UsageError(f"service URL must look like http://127.0.0.1:8000, not {url!r}")
    return parts.hostname, port


def parse_cluster_address(address: str) -> tuple[str, int]:
    """(host, port) of a tcp://host:port or tls://host:port scheduler address, or UsageError saying
    what is wrong."""
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if (
        parts.scheme not in ("tcp", "tls")
        or not parts.hostname
        or port is None
        or parts.path not in ("", "/")
    ):
        raise UsageError(
            f"cluster address must look like tcp://127.0.0.1:8786 (tls://... with --tls), not {address!r}"
        )
    return parts.hostname, port


def cluster_address_problems(address: str, tls: Path | None, what: str) -> list[str]:
    """What is wrong with a scheduler address and --tls together: its form, a scheme that does not
    match --tls, or a host in the open without TLS (`what` says who would reach it)."""
    from ..cluster.security import check_cleartext  # no Dask: the address check alone

    try:
        host, _ = parse_cluster_address(address)
        scheme = urlsplit(address).scheme
        if tls is not None and scheme != "tls":
            raise UsageError(f"with --tls the scheduler's address is tls://HOST:PORT, not {address!r}")
        if tls is None and scheme == "tls":
            raise UsageError(
                f"a tls:// scheduler address needs --tls DIR (its ca.pem, cert.pem, key.pem): {address!r}"
            )
        check_cleartext(what, host, tls)
    except UsageError as exc:
        return [str(exc)]
    return []
