"""The compliance app's rounds: the post's Locust run on both of its data sets, and open ladders.

"PostgreSQL vs SQLite, 2026 edition" ran Locust with 10 users, spawned at 2 users a second, for 60
seconds: a closed model. Here that is one phase of 10 users arriving over 5 s (2 a second) and
held 55 s more, 60 s in all; the measured window is the 55 s after the last user arrived.

Think time: the post does not give its locustfile's wait time, so it is worked out from its own
figures. A closed model's rate is users / (response time + think time): PostgreSQL answered 4.1
req/s with a mean of 1,387 ms, SQLite 5.1 req/s with 784 ms, which both put the think time near
1 s (1.05 and 1.18 s). Each user thinks 0.5 to 1.5 s, uniformly: a mean of 1 s.

    ciso          the populated data set (1,000 assets, 7,500 findings at scale 1), the whole mix
    ciso-empty    the empty data set (one user, the administrator) as the post's "freshly
                  initialised schema"; only the endpoints that answer on it: the asset list, the
                  dashboard and the new asset (a finding needs an asset, a detail an asset id)
    ladder        the open ladder: 10 to 100 req/s in steps of 10, 20 s holds
    quick         a short open ladder, 5 to 25 req/s, to see the workload run

The empty data set's sizes go with its preset; `--size` and `--scale` still apply over them.
"""

from __future__ import annotations

from ...plans import Ladder, Phase, Preset, UserPlan
from .data import EMPTY

POST = "PostgreSQL vs SQLite, 2026 edition"
THINK_MIN, THINK_MAX = 0.5, 1.5
LOCUST_ROUND = UserPlan((Phase(10, 5.0, 55.0),), THINK_MIN, THINK_MAX)

PRESETS = {
    preset.name: preset
    for preset in (
        Preset(
            "ciso",
            f"{POST}, populated: 10 users spawned at 2/s, 60 s, think 0.5-1.5 s",
            None,
            users=LOCUST_ROUND,
            reference="populated: aggregate p50 PostgreSQL 640 ms, SQLite 500 ms; 4.1 and 5.1 req/s "
            "(CISO Assistant on 1 vCPU)",
        ),
        Preset(
            "ciso-empty",
            f"{POST}, empty database: 10 users spawned at 2/s, 60 s, think 0.5-1.5 s",
            None,
            users=LOCUST_ROUND,
            weights=(("list_assets", 1.0), ("dashboard", 1.0), ("create_asset", 1.0)),
            sizes=tuple(EMPTY.items()),
            reference="empty: aggregate p50 PostgreSQL 24 ms, SQLite 31 ms",
        ),
        Preset("ladder", "an open ladder for the ORM app: 10 to 100 req/s", None, Ladder(10, 10, 10, 20, 5)),
        Preset("quick", "a short open ladder: 5 to 25 req/s, 10 s steps", None, Ladder(5, 5, 5, 10, 2)),
    )
}
