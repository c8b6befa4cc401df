"""Fresh data for every run of a round (`--runs N`): seed once, keep a snapshot, restore it.

    async with FreshData(url, workload, data) as fresh:  # seeds, then saves a snapshot
        for _ in range(runs):
            start = await fresh.before_run()             # the data exactly as seeded
            ...                                          # the run: it may write anything
    # the snapshot is dropped here, also when the block raised

Each engine decides how it keeps the copy (`Engine.save_snapshot`): a file for SQLite, a template
database for PostgreSQL, transportable tablespaces for MariaDB (rows copied inside the server when
it is on another machine); where it has nothing faster than seeding (a PostgreSQL user who may
not create databases, MariaDB tables with foreign keys) it says so. Which is faster also depends
on the data set: a PostgreSQL restore forces checkpoints, 1.5 to 2 s here however small the
database, while seeding 5,000 orders takes 0.2 s. So `prepare()` measures: it seeds, saves a
snapshot and restores it once; if that restore took longer than the seeding, the snapshot goes
and every run re-seeds (`method="fastest"`, the default; "restore" or "reseed" forces one where
possible).

That trial restore is also the first run's preparation, so every run's data was made the same
way, which leaves the caches in the same state (a restore copies files; a seed loads rows through
the server). Seeding is deterministic, so both ways give the same rows; `verify=True` proves it
before each run with the data's checksum, at the price of reading every row.

FreshData opens its own small pool only while it works and closes it before the run, so a run
has the server to itself and a restore finds no other client (what the engines require).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..engines import EngineOptions, create_engine, opened
from ..engines.base import Engine
from ..errors import DbladderError, InvalidConfig
from ..urls import DatabaseURL
from ..workloads.base import DataSpec, Workload
from .seeding import ProgressCallback, SeedReport, checksum, seed

FreshMethod = Literal["restore", "reseed"]
MethodChoice = Literal["fastest", "restore", "reseed"]
Checksum = dict[str, str]

# Seeding and the checksum take one connection at a time; a second spares a wait.
FRESH_POOL_SIZE = 2


class StaleData(DbladderError):
    """The data before a run is not the data as seeded (seen with verify=True)."""


@dataclass(frozen=True)
class Preparation:
    """The one-off work before the first run."""

    seeding: SeedReport
    method: FreshMethod  # how every run gets its data
    snapshot_seconds: float | None  # saving the snapshot (None: not tried, method="reseed")
    restore_seconds: float | None  # the trial restore (None: the engine kept no snapshot)
    checksum: Checksum | None = None  # of the data as seeded, with verify=True

    def to_dict(self) -> dict[str, Any]:
        def rounded(seconds: float | None) -> float | None:
            return None if seconds is None else round(seconds, 3)

        return {
            "seeding": self.seeding.to_dict(),
            "method": self.method,
            "snapshot_seconds": rounded(self.snapshot_seconds),
            "restore_seconds": rounded(self.restore_seconds),
            "checksum": self.checksum,
        }


@dataclass(frozen=True)
class FreshStart:
    """How one run got its data."""

    run: int  # from 1
    method: FreshMethod
    # Restoring or seeding, without the checksum; for run 1, the restore or seeding that
    # `prepare()` did last, whose data run 1 uses.
    seconds: float
    checksum: Checksum | None = field(default=None, compare=False)  # with verify=True

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"run": self.run, "method": self.method, "seconds": round(self.seconds, 3)}
        if self.checksum is not None:
            data["checksum"] = self.checksum
        return data


class FreshData:
    """Gives every run of a round the data exactly as seeded; see the module notes."""

    def __init__(
        self,
        url: str | DatabaseURL,
        workload: Workload,
        data: DataSpec,
        *,
        method: MethodChoice = "fastest",
        options: EngineOptions | None = None,
        verify: bool = False,
        progress: ProgressCallback | None = None,
        make: Callable[[Engine], Awaitable[SeedReport]] | None = None,
    ):
        if method not in ("fastest", "restore", "reseed"):
            raise InvalidConfig([f"method must be fastest, restore or reseed, not {method!r}"])
        self.url = url
        problems = workload.validate_sizes(data.sizes)
        if problems:
            raise InvalidConfig(problems)
        self.workload = workload
        self.data = data
        self.method = method
        self.options = (options or EngineOptions(pool_size=FRESH_POOL_SIZE)).checked()
        self.verify = verify
        self.progress = progress
        # How the data is made: the workload's seed, or what the caller says (the user's app's
        # own setup, which dbladder runs and then snapshots).
        self._make = make or (lambda engine: seed(engine, self.workload, self.data, self.progress))
        self.preparation: Preparation | None = None
        self._token: str | None = None
        self._runs = 0
        self._first_seconds = 0.0  # how long prepare() took to make the data run 1 uses

    async def __aenter__(self) -> FreshData:
        try:
            await self.prepare()
        except BaseException:
            await self.cleanup()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.cleanup()

    async def prepare(self) -> Preparation:
        """Seed; then save a snapshot and restore it once, and keep it if that beat the seeding."""
        snapshot_seconds = restore_seconds = None
        async with opened(self.url, self.options) as engine:
            seeding = await self._make(engine)
            digest = await checksum(engine, self.workload.schema) if self.verify else None
            if self.method != "reseed":
                started = time.perf_counter()
                self._token = await engine.save_snapshot()
                snapshot_seconds = time.perf_counter() - started
            if self._token is not None:
                started = time.perf_counter()
                await engine.restore_snapshot(self._token)
                restore_seconds = time.perf_counter() - started
                self._first_seconds = restore_seconds
                if self.method == "fastest" and restore_seconds >= seeding.total_seconds:
                    await self.cleanup()
                    # Seed again, so that every run's data was made by the method runs use.
                    started = time.perf_counter()
                    await self._make(engine)
                    self._first_seconds = time.perf_counter() - started
            else:
                self._first_seconds = seeding.total_seconds
        method: FreshMethod = "reseed" if self._token is None else "restore"
        self.preparation = Preparation(seeding, method, snapshot_seconds, restore_seconds, digest)
        self._runs = 0
        return self.preparation

    async def before_run(self) -> FreshStart:
        """Make the data as seeded again (restore or re-seed); how, how long, and (verify) its checksum."""
        preparation = self.preparation
        if preparation is None:
            raise RuntimeError("FreshData.prepare() must come before before_run()")
        self._runs += 1
        async with opened(self.url, self.options) as engine:
            if self._runs == 1:
                # prepare() left the data as this method makes it (see the module notes).
                seconds = self._first_seconds
            else:
                started = time.perf_counter()
                if self._token is not None:
                    await engine.restore_snapshot(self._token)
                else:
                    await self._make(engine)
                seconds = time.perf_counter() - started
            verified = await self._verified(engine) if self.verify else None
        return FreshStart(self._runs, preparation.method, seconds, verified)

    async def cleanup(self) -> None:
        """Drop the snapshot (again is harmless); the seeded database itself stays."""
        token, self._token = self._token, None
        if token is None:
            return
        engine = create_engine(self.url, self.options)
        try:
            await engine.drop_snapshot(token)
        finally:
            await engine.close()

    async def _verified(self, engine: Engine) -> Checksum:
        """The data's checksum, or StaleData naming the tables that differ from the seeded data."""
        digest = await checksum(engine, self.workload.schema)
        expected = self.preparation.checksum if self.preparation else None
        if expected is not None and digest != expected:
            differ = sorted(t for t in expected.keys() | digest.keys() if expected.get(t) != digest.get(t))
            raise StaleData(
                f"before run {self._runs} the data of {', '.join(differ)} differs from the data as seeded"
            )
        return digest
