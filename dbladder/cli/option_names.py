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
    "search min_answers": "--min-answers",
    "pass mark p95_ms": "--p95",
    "pass mark max_fail_pct": "--max-fail",
    "runs": "--runs",
    "port": "--port",
    "seconds": "--seconds",
    "connections": "--connections",
}
"""A config field, as a problem's first words name it -> the option that sets it; the engines' run
settings (`sqlite_writers`, `sqlite_writers=1`) are added from their registrations (`option_of_field`)."""


def option_of_field() -> dict[str, str]:
    """OPTION_OF_FIELD with each engine's run settings: its key, and its key=value for each choice
    ("sqlite_writers=1" -> "--sqlite-writers 1"). Read when an error is worded, not at start-up."""
    from ..engine_registry import run_settings  # not at start-up: the command line imports this module

    fields = dict(OPTION_OF_FIELD)
    for key, (setting, _) in run_settings().items():
        fields[key] = setting.option
        fields.update({f"{key}={choice}": f"{setting.option} {choice}" for choice in setting.choices})
    return fields


def in_option_words(problem: str, fields: dict[str, str] | None = None) -> str:
    """`problem` with the config field it starts with replaced by its option, if it starts with one."""
    fields = option_of_field() if fields is None else fields
    # The longest field first, so "search hold" wins over "search" and "sqlite_writers=1" over
    # "sqlite_writers".
    leading = re.compile(
        "^(" + "|".join(re.escape(f) for f in sorted(fields, key=len, reverse=True)) + r")(?=[ :(]|$)"
    )
    return leading.sub(lambda match: fields[match.group(1)], problem, count=1)


def worded_for_the_command_line(error: InvalidConfig) -> InvalidConfig:
    """The same error, each problem in the command line's words."""
    fields = option_of_field()
    return InvalidConfig([in_option_words(problem, fields) for problem in error.problems])
