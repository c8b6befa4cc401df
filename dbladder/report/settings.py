"""An engine's settings written out the way "Postgres vs MariaDB on two dedicated CPUs" writes them: as the
file you would copy.

PostgreSQL as a `conf.d/bench.conf`, MariaDB as a `[mariadbd]` section of a `.cnf`, SQLite as the
PRAGMAs of a connection. The values are what the server (or SQLite) reported at the start of the
run (`SHOW`, `SHOW VARIABLES`, `PRAGMA`), from the result's `engine`; nothing here reads a server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..result.run import Engine
from ..urls import KINDS
from .figures import plain

MIB = 1024 * 1024


def _cnf_size(key: str, value: str) -> str:
    """MariaDB reports sizes in bytes; a .cnf says 128M or 2G."""
    if not key.endswith("_size") or not value.isdigit():
        return value
    number = int(value)
    for unit, size in (("G", 1024 * MIB), ("M", MIB)):
        if number >= size and number % size == 0:
            return f"{number // size}{unit}"
    return value


def _postgresql(engine: Engine) -> tuple[str, list[str]]:
    values = _values(engine)
    lines = [f"{key} = {_quoted(plain(value))}" for key, value in values.items()]
    if engine.isolation:
        lines.append(f"default_transaction_isolation = '{engine.isolation}'")
    return "bench.conf (PostgreSQL conf.d)", lines


def _quoted(value: str) -> str:
    """postgresql.conf quotes values that are not a plain word or number."""
    return value if value.replace(".", "").replace("_", "").isalnum() else f"'{value}'"


def _cnf_line(key: str, value: str) -> str:
    # log_bin is read-only on a running server; in a .cnf, "log_bin = OFF" would switch binary
    # logging on with "OFF" as its file name. The option that means what the server reported:
    if key == "log_bin":
        return "skip-log-bin" if value.upper() in ("OFF", "0") else "log-bin"
    return f"{key} = {_cnf_size(key, value)}"


def _mariadb(engine: Engine) -> tuple[str, list[str]]:
    values = _values(engine)
    lines = ["[mariadbd]"]
    lines += [_cnf_line(key, plain(value)) for key, value in values.items()]
    if engine.isolation:
        lines.append(f"transaction-isolation = {str(engine.isolation).upper()}")
    return "99-bench.cnf (MariaDB)", lines


def _sqlite(engine: Engine) -> tuple[str, list[str]]:
    values = _values(engine)
    return "PRAGMAs on every connection (SQLite)", [
        f"PRAGMA {key} = {plain(value)};" for key, value in values.items()
    ]


_WRITERS = {"postgresql.conf": _postgresql, "option file": _mariadb, "pragmas": _sqlite}
"""An engine kind's settings format (`dbladder.urls.EngineKind.settings_format`) -> its writer."""


def _values(engine: Engine) -> dict[str, Any]:
    """The engine's durability settings, then the rest, as the server reported them."""
    return {**(engine.durability or {}), **(engine.settings or {})}


def settings_file(engine: Engine | Mapping[str, Any]) -> tuple[str, str]:
    """(caption, text) of an engine's settings written out as its configuration file."""
    engine = engine if isinstance(engine, Engine) else Engine.from_json(engine)
    kind = KINDS.get(str(engine.engine))
    writer = _WRITERS.get(kind.settings_format) if kind is not None else None
    if writer is None:
        values = _values(engine)
        return f"settings ({engine.engine or '?'})", "\n".join(
            f"{key} = {plain(value)}" for key, value in values.items()
        )
    caption, lines = writer(engine)
    return caption, "\n".join(lines)
