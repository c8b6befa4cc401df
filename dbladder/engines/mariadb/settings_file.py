"""MariaDB's settings written out as the file you would copy, as "Postgres vs MariaDB on two
dedicated CPUs" writes them: a `[mariadbd]` section of a `.cnf` (`dbladder.report.settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...formats import plain

MIB = 1024 * 1024


def settings_file(values: Mapping[str, Any], isolation: object) -> tuple[str, list[str]]:
    """(caption, lines) of the settings the server reported, and the run's isolation."""
    lines = ["[mariadbd]"]
    lines += [_cnf_line(key, plain(value)) for key, value in values.items()]
    if isolation:
        lines.append(f"transaction-isolation = {str(isolation).upper()}")
    return "99-bench.cnf (MariaDB)", lines


def _cnf_size(key: str, value: str) -> str:
    """MariaDB reports sizes in bytes; a .cnf says 128M or 2G."""
    if not key.endswith("_size") or not value.isdigit():
        return value
    number = int(value)
    for unit, size in (("G", 1024 * MIB), ("M", MIB)):
        if number >= size and number % size == 0:
            return f"{number // size}{unit}"
    return value


def _cnf_line(key: str, value: str) -> str:
    # log_bin is read-only on a running server; in a .cnf, "log_bin = OFF" would switch binary
    # logging on with "OFF" as its file name. The option that means what the server reported:
    if key == "log_bin":
        return "skip-log-bin" if value.upper() in ("OFF", "0") else "log-bin"
    return f"{key} = {_cnf_size(key, value)}"
