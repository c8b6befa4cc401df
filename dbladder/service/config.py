"""The service's configuration: one frozen object, validated once, carried to every process.

`ServiceConfig` is built by the CLI (or by the load ladder), checked with `validate()`, and reaches
the worker processes as an argument of the app factory; a process started by `running_service`
receives it as JSON in one environment variable (`CONFIG_ENV`), read in one place (`from_env`).
Nothing about the service is kept in module globals.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..engine_registry import engine_setting_problems, writer_processes
from ..engines.base import DEFAULT_POOL_SIZE, EngineOptions
from ..errors import DbladderError, InvalidConfig
from ..urls import DatabaseURL, parse_url

CONFIG_ENV = "DBLADDER_SERVICE_CONFIG"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MAX_WORKERS = 64


@dataclass(frozen=True)
class ServiceConfig:
    """How to run the web service; the defaults bind loopback with one worker."""

    db_url: str = field(repr=False)  # may hold a password: never in repr()
    # The workload whose routes the service answers: a name, a .py file or module:attr
    # (dbladder.workloads.registry); every process loads it from this text.
    workload: str = "shop"
    host: str = DEFAULT_HOST
    # 0 picks a free port when the service starts (`with_free_port`).
    port: int = DEFAULT_PORT
    workers: int = 1
    # Pooled connections of the whole service, the same for every engine, shared out evenly among
    # the worker processes: the seeds' app is one process with a pool of 100, and a pool per worker
    # would multiply the connections a server sees by the number of workers.
    pool_size: int = DEFAULT_POOL_SIZE
    # Seconds a request may wait for a connection (or, with one writer process, for its turn) -> 503.
    pool_timeout: float = 5.0
    connect_timeout: float = 5.0
    # The engine's run settings by key, as its registration declares them (`dbladder.engine_registry`):
    # SQLite's one writer, which sends every write of every worker through one connection in one
    # writer process (`writer_processes`); {} keeps each at its default.
    engine_settings: dict[str, int] = field(default_factory=dict)
    # Requests one worker works on at once; more wait in the listen backlog (granian backpressure).
    max_in_flight: int = 1024
    # Seconds in-flight requests get to finish after SIGINT/SIGTERM before workers are killed.
    shutdown_timeout: float = 30.0
    # `db_url` parsed, when the caller has it (a run) or once asked (`url`): carried by every copy
    # `replace` makes, never written to JSON (each of the service's processes parses the text).
    parsed_url: DatabaseURL | None = field(default=None, repr=False, compare=False)

    @property
    def url(self) -> DatabaseURL:
        """`db_url` parsed, once for this configuration and its copies; BadURL when it does not parse."""
        parsed = self.parsed_url
        if parsed is None or parsed.raw != self.db_url:
            parsed = parse_url(self.db_url)
            # A memo, not a change: the same URL, parsed. The config stays frozen to its users.
            object.__setattr__(self, "parsed_url", parsed)
        return parsed

    @property
    def pool_per_worker(self) -> int:
        """Each worker's share of the pool (rounded down, at least 1: never more than pool_size in all)."""
        return max(1, self.pool_size // max(1, self.workers))

    @property
    def engine_options(self) -> EngineOptions:
        return EngineOptions(
            pool_size=self.pool_per_worker,
            pool_timeout=self.pool_timeout,
            connect_timeout=self.connect_timeout,
        )

    @property
    def writer_processes(self) -> int:
        """The writer processes the engine's settings ask for, which take every write (0: none)."""
        return writer_processes(self.engine_settings)

    @property
    def engine(self) -> str:
        """The engine name the URL selects (`sqlite`, `postgresql`, `mariadb`)."""
        return self.url.engine

    @property
    def base_url(self) -> str:
        """Where clients reach the service, e.g. `http://127.0.0.1:8000`."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def validate(self) -> list[str]:
        """Every problem with this configuration, each naming its field."""
        problems = []
        engine = None
        try:
            engine = self.url.kind
        except DbladderError as exc:
            problems.append(f"db_url: {exc}")
        if not self.workload.strip():
            problems.append("workload must name a workload: shop, a .py file or module:attr")
        if not self.host:
            problems.append("host must name an address to bind, e.g. 127.0.0.1")
        if not 0 <= self.port <= 65535:
            problems.append(f"port must be from 0 (any free port) to 65535, not {self.port}")
        if not 1 <= self.workers <= MAX_WORKERS:
            problems.append(f"workers must be from 1 to {MAX_WORKERS}, not {self.workers}")
        # Validate the pool as given, not each worker's share (which is at least 1 by construction).
        problems.extend(EngineOptions(self.pool_size, self.pool_timeout, self.connect_timeout).validate())
        if self.workers >= 1 and self.pool_size < self.workers:
            problems.append(
                f"pool_size ({self.pool_size}) must be at least one connection per worker ({self.workers})"
            )
        problems += engine_setting_problems(self.engine_settings, engine)
        if not 1 <= self.max_in_flight <= 100_000:
            problems.append(f"max_in_flight must be from 1 to 100000, not {self.max_in_flight}")
        if not self.shutdown_timeout > 0:
            problems.append(f"shutdown_timeout must be above 0 seconds, not {self.shutdown_timeout}")
        return problems

    def checked(self) -> ServiceConfig:
        """This configuration, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    def replace(self, **changes: object) -> ServiceConfig:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def to_json(self) -> str:
        fields = dataclasses.asdict(self)
        del fields["parsed_url"]
        return json.dumps(fields, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ServiceConfig:
        """The configuration `to_json` wrote; InvalidConfig if it is not one."""
        try:
            fields = json.loads(text)
            return cls(**fields).checked()
        except (ValueError, TypeError) as exc:
            raise InvalidConfig([f"{CONFIG_ENV} does not hold a service configuration: {exc}"]) from None

    @classmethod
    def from_env(cls) -> ServiceConfig:
        """The configuration a parent process put into `CONFIG_ENV`."""
        text = os.environ.get(CONFIG_ENV)
        if not text:
            raise InvalidConfig([f"{CONFIG_ENV} is not set; start the service with `dbladder serve`"])
        return cls.from_json(text)


@dataclass(frozen=True)
class RuntimePaths:
    """Files one running service shares between its processes (in a private temporary folder)."""

    stats: Path  # the counters file (`stats.py`)
    writer_socket: Path | None = None  # the single writer's Unix socket, with one writer process
