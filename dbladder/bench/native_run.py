"""`dbladder bench --native` as one call: the database (a `managed:` one started for it, on the
database role's CPUs and under its cap), the result that will carry the reference checked first,
the shop seeded if asked, the page cache dropped if asked, the native client measured on the
generator's CPUs, and the block written into the result with its reports rebuilt."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..roles import Placement, UnmanagedRole, drop_page_cache
from ..servers import is_managed_spec, managed_server_for, parse_managed_spec, placement_refusal
from ..urls import parse_url
from .loading import check_scale, load_data
from .native import missing_client, native_reference
from .native_config import WORKLOAD, NativeClientMissing, NativeConfig
from .native_result import result_for_reference, save_reference


@dataclass(frozen=True)
class NativeRun:
    """What one `bench --native` measured: the reference, and the result that now carries it."""

    block: dict[str, Any]
    result: dict[str, Any] | None = None
    result_file: Path | None = None


def run_native(
    config: NativeConfig,
    db_text: str,
    placement: Placement,
    scale: float | None = None,
    result_path: Path | None = None,
    say: Callable[[str], None] = lambda line: None,
    progress: Callable[[str], None] | None = None,
) -> NativeRun:
    """Measure the native reference on `db_text` (a URL, or `managed:ENGINE` for a server started for
    the measurement; `config.db_url` is then a stand-in until it runs). Everything that can be
    refused is refused before a server starts or a row is loaded, in this order: the placement, the
    managed spec, the config, a native client that is not installed. `say` hears the line before seeding."""
    refusal = placement_refusal(db_text, placement.database)
    if refusal is not None:
        raise UnmanagedRole(refusal)
    managed = is_managed_spec(db_text)
    if managed:
        parse_managed_spec(db_text)  # a bad spec is refused before any server starts
    config = config.checked()
    engine = parse_managed_spec(db_text)[0] if managed else parse_url(config.db_url).engine
    reason = missing_client(engine)
    if reason:
        raise NativeClientMissing(reason)  # before anything is loaded or measured
    with managed_server_for(db_text, limits=placement.database) as server:
        if server is not None:
            config = replace(config, db_url=server.url)
        result, result_file = None, None
        if result_path is not None:
            result, result_file = result_for_reference(result_path, config.db_url)
        if scale is not None:
            check_scale(scale)
            say(f"loading {WORKLOAD} at scale {scale:g} into {parse_url(config.db_url).redacted} ...")
            asyncio.run(load_data(config.db_url, WORKLOAD, scale))
        if placement.drop_caches:
            drop_page_cache()
        block = native_reference(config, progress)
        if result is not None and result_file is not None:
            block = save_reference(result, result_file, block)
        return NativeRun(block, result, result_file)
