"""SQLite's settings written out as what you would copy: the PRAGMAs of a connection
(`dbladder.report.settings` shows them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...formats import plain


def settings_file(values: Mapping[str, Any], isolation: object) -> tuple[str, list[str]]:
    """(caption, lines) of the PRAGMAs SQLite reported; SQLite has no isolation setting to write."""
    return "PRAGMAs on every connection (SQLite)", [
        f"PRAGMA {key} = {plain(value)};" for key, value in values.items()
    ]
