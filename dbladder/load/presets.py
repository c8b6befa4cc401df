"""Named rounds with the seeds' exact parameters, so a user can rerun a post's experiment by name.

Seed 000's rounds are `name, write share, start, step, steps, hold`:

    read-1        0    1000  1000  20  30s   reads only
    shop20-1      0.2   250   250  24  30s   one write in five
    shop20-1w-1   0.2   250   250  24  30s   the same, SQLite with one write connection

The post measured pure writes too (PostgreSQL 700-1,000 req/s, SQLite 398 -> 499) without giving
that round's ladder; `write` uses 100-request steps so its ceiling has that precision.
`quick` is the default of `dbladder run`: a short shop ladder that finishes in about two minutes
on a laptop, to see the tool work before committing half an hour to a seed round.

Seed 001's rounds are closed: users who each send, think 50-150 ms and send again, arriving in
levels of 100, 200, 400, 800, 1,600 and 3,200 users (10 s arrival ramp, 80 s hold):

    users-read    WRITES=0.05
    users-write   WRITES=0.5
    spike         100 -> 3,000 -> 100 users at once, 20 % writes
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from .plans import Ladder, UserPlan


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    write_share: float
    ladder: Ladder | None = None  # open model: the arrival-rate ladder
    sqlite_writers: int | None = None  # None: the service's default (the pool)
    users: UserPlan | None = None  # closed model: users with think time, instead of a ladder


PRESETS = {
    preset.name: preset
    for preset in (
        Preset("read", "seed 000 read-1: reads only", 0.0, Ladder(1000, 1000, 20, 30)),
        Preset("shop20", "seed 000 shop20-1: 20 % writes", 0.2, Ladder(250, 250, 24, 30)),
        Preset(
            "shop20-1w",
            "seed 000 shop20-1w-1: 20 % writes, SQLite with one write connection",
            0.2,
            Ladder(250, 250, 24, 30),
            sqlite_writers=1,
        ),
        Preset(
            "write", "writes only (seed 000 names the figures, not the ladder)", 1.0, Ladder(100, 100, 20, 30)
        ),
        Preset(
            "quick", "a short shop ladder: 20 % writes, 10 s steps", 0.2, Ladder(250, 250, 10, 10, warmup=2)
        ),
        Preset("users-read", "seed 001 reads: users 100 to 3,200, 5 % writes", 0.05, users=UserPlan.levels()),
        Preset(
            "users-write", "seed 001 writes: users 100 to 3,200, 50 % writes", 0.5, users=UserPlan.levels()
        ),
        Preset(
            "spike", "seed 001 spike: 100 -> 3,000 -> 100 users, 20 % writes", 0.2, users=UserPlan.spike()
        ),
    )
}

DEFAULT_PRESET = "quick"


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UsageError(f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}") from None
