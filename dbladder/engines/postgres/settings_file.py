"""PostgreSQL's settings written out as the file you would copy, as "Postgres vs MariaDB on two
dedicated CPUs" writes them: a `conf.d/bench.conf` (`dbladder.report.settings` shows it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...formats import plain


def settings_file(values: Mapping[str, Any], isolation: object) -> tuple[str, list[str]]:
    """(caption, lines) of the settings the server reported, and the run's isolation."""
    lines = [f"{key} = {_quoted(plain(value))}" for key, value in values.items()]
    if isolation:
        lines.append(f"default_transaction_isolation = '{isolation}'")
    return "bench.conf (PostgreSQL conf.d)", lines


def _quoted(value: str) -> str:
    """postgresql.conf quotes values that are not a plain word or number."""
    return value if value.replace(".", "").replace("_", "").isalnum() else f"'{value}'"
