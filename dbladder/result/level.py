"""A level of the result, typed: its rates, latency, failures, verdict, and each operation's share.

`level_rows.level_row` computes a level's figures from the recorder's merged snapshot; `Level` is the
same row as the reports read it (`result.run.RunResult.levels`). Every field is a key of the row
documented in docs/result-schema.md; the machine's figures (`machine`, `service_breakdown`) are
typed in `machine.py`, which knows where each of the sampler's figures lives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .machine import Machine, ServiceBreakdown
from .part import Part


@dataclass(frozen=True, kw_only=True)
class Latency(Part):
    """Percentiles of a set of requests, ms: the successful answers (`answered`), or every answer
    from when it was sent (`sent`)."""

    p50_ms: float = 0.0
    p95_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0


@dataclass(frozen=True, kw_only=True)
class P95Interval(Part):
    """Where the level's true p95 lies with 95 % confidence, from order statistics
    (`interval.p95_interval`): ms, `high_ms` None when no answer bounds it from above; over `n`
    latencies; its exact confidence; whether the reports show it."""

    low_ms: float
    high_ms: float | None
    n: int
    coverage: float
    # Worth showing beside the level (`interval.is_wide`); None in a result from before it was kept.
    wide: bool | None = None


@dataclass(frozen=True, kw_only=True)
class FailedAfter(Part):
    """How long the failures took from their due time, ms."""

    p50_ms: float = 0.0
    max_ms: float = 0.0


@dataclass(frozen=True, kw_only=True)
class GeneratorUse(Part):
    """The CPU the load generator used during the level: seconds, and its share of one CPU."""

    cpu_seconds: float = 0.0
    cpu_share: float = 0.0


@dataclass(frozen=True, kw_only=True)
class OperationFigures(Part):
    """One operation's share of a level (`level_rows.operation_rows`)."""

    requests: int = 0
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    answered_p95_ms: float = 0.0
    fail_pct: float = 0.0
    failures: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Queries(Part):
    """Queries per request of one operation in a level (`queries.query_rows`)."""

    requests: int = 0
    statements: int = 0
    round_trips: int = 0
    statements_per_request: float | None
    round_trips_per_request: float | None


@dataclass(frozen=True, kw_only=True)
class SecondRow(Part):
    """One second of a level's measured window (`seconds.second_rows`): its length (1 but for the
    window's last part-second; a result of schema 2 has whole seconds only), requests due in it
    that were sent and those dropped (None in a result from before it was kept), answers that
    arrived in it, requests due in it that failed, the latency from the due time of its successful
    answers (None without any), and the largest schedule lag of those sent (None in a result from
    before it was kept)."""

    t: int
    length_s: float = 1.0
    sent: int
    dropped: int | None = None
    answered: int
    failed: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    lag_max_ms: float | None = None


@dataclass(frozen=True, kw_only=True)
class Cause(Part):
    """Why a level failed, or how a passing one came close (`result.diagnosis.Diagnosis`): its kind
    (generator, stall, saturation, cannot tell, passed), the resource that ran out in a saturation,
    the line the reports print, and the figures that show it."""

    kind: str
    line: str
    resource: str | None
    evidence: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class LevelReads(Part):
    """What the database read during a level's window: from its own `cache` (hits, misses, the share
    missed) and from disk (bytes, and at most this share of the pages read)."""

    cache: str | None = None
    cache_hits: int | None = None
    cache_misses: int | None = None
    miss_share: float | None = None
    disk_bytes: int | None = None
    disk_share: float | None = None


@dataclass(frozen=True, kw_only=True)
class HostWindow(Part):
    """A cluster agent's host during a level's window: its CPU in use (% of its CPUs), or, once the
    agent was lost, `measured` false and the `cause`."""

    role: str | None = None
    busy: float | None = None
    measured: bool | None = None
    cause: str | None = None


@dataclass(frozen=True, kw_only=True)
class Level(Part):
    """One level (a ladder's step, a search's probe, a users phase) as `level_rows.level_row` wrote it."""

    index: int
    offered_rps: float
    sent_rps: float | None = None
    achieved_rps: float
    requests: int
    responses: int
    served: int | None = None
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float
    p95_interval: P95Interval | None = None
    answered: Latency | None = None
    failed_after: FailedAfter | None = None
    sent: Latency
    lag_p99_ms: float
    fail_pct: float
    failures: Mapping[str, int]
    dropped: int
    state: str
    start_s: float
    hold_s: float
    warmup_s: float
    timeout_s: float | None = None
    generator: GeneratorUse
    flags: tuple[str, ...] = ()
    histograms: Mapping[str, Any]
    operations: Mapping[str, OperationFigures] | None = None
    queries: Mapping[str, Queries] | None = None
    users: int | None = None
    ramp_s: float | None = None
    passed: bool
    reasons: tuple[str, ...] = ()
    machine: Machine | None = None
    service_breakdown: ServiceBreakdown | None = None
    syscalls: Mapping[str, Any] | None = None
    faults: tuple[Mapping[str, Any], ...] | None = None
    # What the database read from its cache and from disk during the window (run/storage_reads.py).
    storage: LevelReads | None = None
    # A cluster run: each db and app agent's host during the window, by agent name.
    hosts: Mapping[str, HostWindow] | None = None
    clocks: Mapping[str, Any] | None = None  # a cluster run: the agents' clock offsets for the level
    # The engine's activity probe over the window (sessions by state, waits) and its samples.
    activity: Mapping[str, Any] | None = None
    activity_seconds: tuple[Mapping[str, Any], ...] | None = None
    seconds: tuple[SecondRow, ...] | None = None
    # Each measured resource's use as a share of its bound (run/diagnose.py), for a search's doubt.
    resource_shares: Mapping[str, float] | None = None
    diagnosis: Cause | None = None

    @property
    def number(self) -> int:
        """The level as the reports count it: 1 for the first."""
        return self.index + 1

    @property
    def answered_p95_ms(self) -> float:
        """p95 of the successful answers alone (a row without the block: its own p95)."""
        return float((self.answered or self).p95_ms)
