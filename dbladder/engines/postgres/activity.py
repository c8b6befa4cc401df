"""What PostgreSQL was doing: the wait events of the run's backends, checkpoints and buffers written.

Every reading asks, on a connection of the probe's own to the run's database:
  * pg_stat_activity, for the client backends connected to that database (not the probe's own):
    how many were running a statement ("active") and, of those, what each was waiting for, by
    wait_event_type (Lock, LWLock, IO, Client, IPC, ...; "CPU" when it waited for nothing) and
    by wait event ("event.Lock:transactionid"); and how many sat idle inside a transaction;
  * the checkpointer's and background writer's counters: pg_stat_bgwriter up to PostgreSQL 16,
    pg_stat_checkpointer with pg_stat_bgwriter from 17 (where the checkpoint columns moved, and
    buffers written by backends went to pg_stat_io: that figure is missing there).

A window's figures (`figures`): `active_sessions` (mean per reading), `share.<type>` and
`share.event.<type>:<event>` (shares of the active backends' readings), `lock_wait_share`
(`share.Lock`, 0 when backends were active and none waited on a lock), `idle_in_transaction`
(mean per reading), and as differences over the window `checkpoints`,
`checkpoints_requested` (by a full WAL or a CHECKPOINT rather than the timer),
`buffers_written_checkpoint`, `buffers_written_bgwriter`, `buffers_written_backend`.

A user without pg_read_all_stats sees the wait events of its own role's backends only, which are
the run's. The probe holds a connection to the run's database: stop it before anything that
needs the database to itself (a snapshot's restore).

Cost, at the default interval of 0.1 s (`python benchmarks/activity_cost.py postgresql`):
a reading back to back costs this process 43-57 us of CPU and
the server 34-43 us (the probe's backend), so 0.04-0.06 % and 0.03-0.04 % of a core at ten
readings a second; the sampler's thread used 0.66 % of a core over a 4 s round, its event loop
and connection included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ...urls import DatabaseURL
from ..activity import Counters, ServerProbe, counter_differences, differences, read_counters, session_shares
from ..base import ActivityReading, EngineOptions
from .connection import PostgresCore, _Connection

SESSIONS_SQL = """
SELECT state, coalesce(wait_event_type, 'CPU'), coalesce(wait_event, ''), count(*)
FROM pg_stat_activity
WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'
  AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')
GROUP BY 1, 2, 3
"""
CHECKPOINTER_VERSION = 170000  # PostgreSQL 17 moved the checkpoint counters to pg_stat_checkpointer
COUNTER_NAMES = {
    "checkpoints_timed": "checkpoints_timed",
    "checkpoints_requested": "checkpoints_requested",
    "buffers_checkpoint": "buffers_written_checkpoint",
    "buffers_clean": "buffers_written_bgwriter",
    "buffers_backend": "buffers_written_backend",
}


def counters_sql(server_version_num: int) -> str:
    """The checkpoint and buffer counters, under the same names on every server version."""
    if server_version_num >= CHECKPOINTER_VERSION:
        return (
            "SELECT c.num_timed AS checkpoints_timed, c.num_requested AS checkpoints_requested, "
            "c.buffers_written AS buffers_checkpoint, b.buffers_clean "
            "FROM pg_stat_checkpointer c, pg_stat_bgwriter b"
        )
    return (
        "SELECT checkpoints_timed, checkpoints_req AS checkpoints_requested, buffers_checkpoint, "
        "buffers_clean, buffers_backend FROM pg_stat_bgwriter"
    )


class PostgresActivity(ServerProbe[_Connection]):
    """The `ActivityProbe` of PostgreSQL; see the module doc."""

    engine: ClassVar[str] = "postgresql"
    default_interval: ClassVar[float] = 0.1

    def __init__(self, url: DatabaseURL, counters: Counters | None = None):
        core = PostgresCore(url, EngineOptions(pool_size=1))
        self._database = core.endpoint.database
        super().__init__(core, counters)
        self._counters_sql = ""

    async def open(self) -> None:
        await super().open()
        version = await self.connection.raw.fetchval("SELECT current_setting('server_version_num')::int")
        self._counters_sql = counters_sql(int(version))

    async def read(self) -> ActivityReading:
        raw = self.connection.raw
        sessions: dict[str, int] = {}
        idle_in_transaction = 0
        for state, wait_type, wait_event, count in await raw.fetch(SESSIONS_SQL, self._database):
            if state != "active":
                idle_in_transaction += count
                continue
            sessions["active"] = sessions.get("active", 0) + count
            sessions[wait_type] = sessions.get(wait_type, 0) + count
            if wait_event:
                name = f"event.{wait_type}:{wait_event}"
                sessions[name] = sessions.get(name, 0) + count
        row = await raw.fetchrow(self._counters_sql)
        totals = {name: float(value) for name, value in dict(row).items() if value is not None}
        totals["idle_in_transaction"] = float(idle_in_transaction)
        totals.update(read_counters(self._counters))
        return ActivityReading(0.0, sessions, totals)

    def figures(self, readings: Sequence[ActivityReading]) -> dict[str, float]:
        inside = readings[1:]
        figures = session_shares(inside)
        figures["idle_in_transaction"] = sum(r.totals.get("idle_in_transaction", 0.0) for r in inside) / len(
            inside
        )
        grown = differences(readings[0], readings[-1], COUNTER_NAMES)
        if "checkpoints_timed" in grown and "checkpoints_requested" in grown:
            grown["checkpoints"] = grown.pop("checkpoints_timed") + grown["checkpoints_requested"]
        figures.update(grown)
        figures.update(counter_differences(readings))
        return figures
