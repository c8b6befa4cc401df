"""The engine class: its connection, loading and snapshot pieces put together (the package's
notes say what each does)."""

from __future__ import annotations

from .loading import MariaDBLoading
from .snapshot import MariaDBSnapshots

__all__ = ["MariaDBEngine"]


class MariaDBEngine(MariaDBLoading, MariaDBSnapshots):
    """MariaDB (and MySQL) through asyncmy: the `Engine` of `dbladder.engines.base`."""
