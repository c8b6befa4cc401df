"""An engine's settings written out the way "Postgres vs MariaDB on two dedicated CPUs" writes them: as the
file you would copy.

Each engine writes its own (its registration's `settings_writer`: PostgreSQL a `conf.d/bench.conf`,
MariaDB a `[mariadbd]` section of a `.cnf`, SQLite the PRAGMAs of a connection). The values are what
the server (or SQLite) reported at the start of the run (`SHOW`, `SHOW VARIABLES`, `PRAGMA`), from
the result's `engine`; nothing here reads a server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine_registry import load, registered
from ..result.run import EngineAsRun
from .figures import plain


def _values(engine: EngineAsRun) -> dict[str, Any]:
    """The engine's durability settings, then the rest, as the server reported them."""
    return {**(engine.durability or {}), **(engine.settings or {})}


def settings_file(engine: EngineAsRun | Mapping[str, Any]) -> tuple[str, str]:
    """(caption, text) of an engine's settings written out as its configuration file; plain
    `name = value` lines for an engine no installed package registers."""
    engine = engine if isinstance(engine, EngineAsRun) else EngineAsRun.from_json(engine)
    values = _values(engine)
    kind = registered().kinds.get(str(engine.engine))
    if kind is None:
        return f"settings ({engine.engine or '?'})", "\n".join(
            f"{key} = {plain(value)}" for key, value in values.items()
        )
    caption, lines = load(kind.settings_writer)(values, engine.isolation)
    return caption, "\n".join(lines)
