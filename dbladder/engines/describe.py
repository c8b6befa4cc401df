"""An engine's settings: read from the database (`describe`), and as the terminal shows them
(`render`: `dbladder engines`, `dbladder db start`, `dbladder serve` and the service started for a
run, `python -m dbladder.service`, print the same lines)."""

from __future__ import annotations

from ..urls import DatabaseURL
from . import opened
from .base import EngineInfo, EngineOptions


async def describe(url: str | DatabaseURL, options: EngineOptions) -> EngineInfo:
    """The engine's settings, read back from the database on a pool opened for it and closed after."""
    async with opened(url, options) as engine:
        return await engine.describe()


def render(info: EngineInfo) -> str:
    """The engine settings as aligned `key: value` lines."""
    lines = [
        ("engine", f"{info.engine} {info.server_version}"),
        ("driver", f"{info.driver} {info.driver_version}"),
        ("url", info.url),
        ("transport", info.transport),
        ("durable", "yes" if info.durable else f"NO ({info.durability_note})"),
        *((f"  {k}", v) for k, v in info.durability.items()),
        ("isolation", info.isolation),
        ("pool size", str(info.pool_size)),
        ("prepared", info.prepared_statements),
        *((k, v) for k, v in info.settings.items()),
    ]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in lines)
