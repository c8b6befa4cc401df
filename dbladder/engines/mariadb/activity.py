"""What MariaDB was doing: lock waits, row-lock time, buffer pool waits, the redo log's checkpoint age.

Every reading asks, on a connection of the probe's own:
  * information_schema.PROCESSLIST joined to INNODB_TRX, for the connections using the run's
    database (not the probe's own): how many were running a statement ("active") and how many
    of those were waiting for a row lock ("Lock": their transaction in LOCK WAIT);
  * SHOW GLOBAL STATUS for InnoDB's counters, which are the whole server's, not the database's:
    row lock waits and the time spent in them, waits for a free page in the buffer pool, waits
    for space in the redo log buffer, and the checkpoint age (how much redo the last checkpoint
    is behind; InnoDB flushes harder as it nears Innodb_checkpoint_max_age, and stalls writes
    at it).

A window's figures (`figures`): `active_sessions`, `share.Lock` and `lock_wait_share` (shares of
the active connections' readings), and as differences over the window `row_lock_waits`,
`row_lock_seconds`, `buffer_pool_wait_free`, `log_waits`, `data_fsyncs`; from the gauges
`row_lock_current_waits` (mean per reading), `checkpoint_age_max` (bytes, the window's highest)
and `checkpoint_age_share_max` (that, over the max age).

Reading INNODB_TRX and another session's PROCESSLIST row needs the PROCESS privilege; without it
the session figures are missing and `warnings` of the sampler say why.

The default interval is 0.25 s, not PostgreSQL's 0.1 s: InnoDB fills INNODB_TRX from a cache
that it refreshes only after 0.1 s without a reader, so reading it every 0.1 s or faster (or
beside another client that does) would read one stale copy for ever. Innodb_row_lock_current_waits
(the whole server's waits now, `row_lock_current_waits`, a mean) does not depend on that cache.

Cost, at the default interval of 0.25 s (`python benchmarks/activity_cost.py mariadb`):
a reading back to back costs this process 157-191 us of CPU and
the server 446-668 us (the probe's connection thread: the information_schema tables are built
for each query), so 0.06-0.08 % and 0.11-0.27 % of a core at four readings a second; the
sampler's thread used 0.35 % of a core over a 4 s round, its event loop and connection included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ...urls import DatabaseURL
from ..activity import Counters, ServerProbe, counter_differences, differences, read_counters, session_shares
from ..base import ActivityReading, EngineOptions
from .connection import MariaDBCore, _Connection, parse_settings

SESSIONS_SQL = """
SELECT COUNT(*), COALESCE(SUM(t.trx_state = 'LOCK WAIT'), 0)
FROM information_schema.PROCESSLIST p
LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID
WHERE p.DB = %s AND p.ID <> CONNECTION_ID() AND p.COMMAND IN ('Query', 'Execute', 'Fetch', 'Prepare')
"""
COUNTERS = {
    "Innodb_row_lock_waits": "row_lock_waits",
    "Innodb_row_lock_time": "row_lock_ms",
    "Innodb_buffer_pool_wait_free": "buffer_pool_wait_free",
    "Innodb_log_waits": "log_waits",
    "Innodb_data_fsyncs": "data_fsyncs",
}
GAUGES = ("Innodb_checkpoint_age", "Innodb_checkpoint_max_age", "Innodb_row_lock_current_waits")
STATUS_SQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ({})".format(
    ", ".join(f"'{name}'" for name in (*COUNTERS, *GAUGES))
)


class MariaDBActivity(ServerProbe[_Connection]):
    """The `ActivityProbe` of MariaDB; see the module doc."""

    engine: ClassVar[str] = "mariadb"
    # InnoDB refreshes INNODB_TRX only once 0.1 s have gone by without anyone reading it: a probe
    # reading it more often would read the same stale copy forever.
    default_interval: ClassVar[float] = 0.25

    def __init__(self, url: DatabaseURL, counters: Counters | None = None):
        self._settings = parse_settings(url)
        super().__init__(MariaDBCore(url, EngineOptions(pool_size=1)), counters)

    async def read(self) -> ActivityReading:
        async with self.connection.raw.cursor() as cursor:
            await cursor.execute(SESSIONS_SQL, (self._settings.database,))
            active, waiting = await cursor.fetchone()
            await cursor.execute(STATUS_SQL)
            status = await cursor.fetchall()
        totals = {name: float(value) for name, value in status}
        totals.update(read_counters(self._counters))
        return ActivityReading(0.0, {"active": int(active), "Lock": int(waiting)}, totals)

    def figures(self, readings: Sequence[ActivityReading]) -> dict[str, float]:
        inside = readings[1:]
        figures = session_shares(inside)
        grown = differences(readings[0], readings[-1], COUNTERS)
        if "row_lock_ms" in grown:
            grown["row_lock_seconds"] = grown.pop("row_lock_ms") / 1000
        figures.update(grown)
        current = [
            r.totals["Innodb_row_lock_current_waits"]
            for r in inside
            if "Innodb_row_lock_current_waits" in r.totals
        ]
        if current:
            figures["row_lock_current_waits"] = sum(current) / len(current)
        ages = [r.totals["Innodb_checkpoint_age"] for r in inside if "Innodb_checkpoint_age" in r.totals]
        limits = [
            r.totals["Innodb_checkpoint_max_age"] for r in inside if r.totals.get("Innodb_checkpoint_max_age")
        ]
        if ages:
            figures["checkpoint_age_max"] = max(ages)
            if limits:
                figures["checkpoint_age_share_max"] = max(ages) / max(limits)
        figures.update(counter_differences(readings))
        return figures
