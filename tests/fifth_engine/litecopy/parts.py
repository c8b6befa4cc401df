"""LiteCopy's parts: SQLite's, each under LiteCopy's name, so that what a run records (the engine's
description, its activity) names the engine the URL named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbladder.engines.sqlite.activity import SQLiteActivity
from dbladder.engines.sqlite.dialect import SQLiteDialect
from dbladder.engines.sqlite.engine import SQLiteEngine

from . import KIND


class LiteCopyEngine(SQLiteEngine):
    name = "litecopy"


class LiteCopyActivity(SQLiteActivity):
    engine = "litecopy"


class LiteCopyDialect(SQLiteDialect):
    kind = KIND


DIALECT = LiteCopyDialect()


def settings_file(values: Mapping[str, Any], isolation: object) -> tuple[str, list[str]]:
    return "PRAGMAs of LiteCopy", [f"PRAGMA {key} = {value};" for key, value in values.items()]
