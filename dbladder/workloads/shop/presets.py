"""The shop's rounds, with the posts' exact parameters, so a user can rerun a post's experiment by name.

"Postgres vs SQLite under load" (db-wars) climbs open ladders, `name, write share, start, step,
steps, hold`:

    read-1        0    1000  1000  20  30s   reads only
    shop20-1      0.2   250   250  24  30s   one write in five
    shop20-1w-1   0.2   250   250  24  30s   the same, SQLite with one write connection

The post measured pure writes too (PostgreSQL 700-1,000 req/s, SQLite 398 -> 499) without giving
that round's ladder; `write` uses 100-request steps so its ceiling has that precision.

"Postgres vs MariaDB on two dedicated CPUs" (db-wars) runs closed rounds: users who each send,
think 50-150 ms and send again, arriving in levels of 100, 200, 400, 800, 1,600 and 3,200 users
(10 s arrival ramp, 80 s hold):

    users-read    WRITES=0.05
    users-write   WRITES=0.5
    spike         100 -> 3,000 -> 100 users at once, 20 % writes
"""

from __future__ import annotations

from ...plans import Ladder, Preset, UserPlan

UNDER_LOAD = "Postgres vs SQLite under load"
TWO_CPUS = "Postgres vs MariaDB on two dedicated CPUs"

PRESETS = {
    preset.name: preset
    for preset in (
        Preset("read", f"{UNDER_LOAD}, read-1: reads only", 0.0, Ladder(1000, 1000, 20, 30)),
        Preset("shop20", f"{UNDER_LOAD}, shop20-1: 20 % writes", 0.2, Ladder(250, 250, 24, 30)),
        Preset(
            "shop20-1w",
            f"{UNDER_LOAD}, shop20-1w-1: 20 % writes, SQLite with one write connection",
            0.2,
            Ladder(250, 250, 24, 30),
            engine_settings=(("sqlite_writers", 1),),  # the SQLite engine's one writer
        ),
        Preset(
            "write",
            f"writes only ({UNDER_LOAD} gives the figures, not the ladder)",
            1.0,
            Ladder(100, 100, 20, 30),
        ),
        Preset(
            "users-read", f"{TWO_CPUS}, reads: users 100 to 3,200, 5 % writes", 0.05, users=UserPlan.levels()
        ),
        Preset(
            "users-write",
            f"{TWO_CPUS}, writes: users 100 to 3,200, 50 % writes",
            0.5,
            users=UserPlan.levels(),
        ),
        Preset(
            "spike", f"{TWO_CPUS}, spike: 100 -> 3,000 -> 100 users, 20 % writes", 0.2, users=UserPlan.spike()
        ),
    )
}
