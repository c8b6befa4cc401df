"""The command line's words for the library's: a problem that names a config field names the option.

The library's configs validate themselves and name their fields (`pool_size must be from 1 to
10000`), which is right for a library user and wrong on the command line, where the user typed
`--pool 0`. `main` passes every InvalidConfig through `in_option_words`, so each message is
written once, in the library, and the CLI says `--pool must be from 1 to 10000`.
"""

from __future__ import annotations

import re

from ..errors import InvalidConfig

OPTION_OF_FIELD = {
    "db_url": "--db",
    "db": "--db",
    "pool_size": "--pool",
    "pool_timeout": "--pool-timeout",
    "workers": "--workers",
    "generator_processes": "--generators",
    "in_flight": "--in-flight",
    "max_in_flight": "--in-flight",
    "sqlite_writers=1": "--sqlite-writers 1",
    "sqlite_writers": "--sqlite-writers",
    "service_url": "--service",
    "target": "--target",
    "transport": "--transport",
    "added latency": "--added-latency",
    "timeout": "--timeout",
    "seed": "--seed",
    "scale": "--scale",
    "start": "--start",
    "step": "--step",
    "steps": "--steps",
    "hold": "--hold",
    "warmup": "--warmup",
    "warmup_seconds": "--warmup",
    "search start": "--start",
    "search hold": "--hold",
    "search warmup": "--warmup",
    "resolution": "--resolution",
    "budget": "--budget",
    "pass mark p95_ms": "--p95",
    "pass mark max_fail_pct": "--max-fail",
    "runs": "--runs",
    "port": "--port",
    "seconds": "--seconds",
    "connections": "--connections",
}
"""A config field, as a problem's first words name it -> the option that sets it."""

# The longest field first, so "search hold" wins over "search" and "sqlite_writers=1" over "sqlite_writers".
_LEADING_FIELD = re.compile(
    "^(" + "|".join(re.escape(f) for f in sorted(OPTION_OF_FIELD, key=len, reverse=True)) + r")(?=[ :(]|$)"
)


def in_option_words(problem: str) -> str:
    """`problem` with the config field it starts with replaced by its option, if it starts with one."""
    return _LEADING_FIELD.sub(lambda match: OPTION_OF_FIELD[match.group(1)], problem, count=1)


def worded_for_the_command_line(error: InvalidConfig) -> InvalidConfig:
    """The same error, each problem in the command line's words."""
    return InvalidConfig([in_option_words(problem) for problem in error.problems])
