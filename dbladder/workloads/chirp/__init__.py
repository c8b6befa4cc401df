"""Chirp: the social app of "SQLite handled 315 million daily requests on a laptop".

Users, posts, follows and likes at the post's cardinalities (50,000 users, 1,000,000 posts,
2,498,799 follows, 4,999,764 likes at scale 1), its pages (a post, a profile, the timeline) and
writes (a post, a like, a follow). The modules:

    schema      the tables and the indexes each query needs
    data        the deterministic generator (`ChirpConfig`, `generate`)
    operations  the SQL and one async function per operation
    endpoints   the operations in the workload interface: parse, draw, render, run, acknowledge
    presets     the post's HTTP rounds, with its figures
    verify      the integrity check: acknowledged writes, invariants

Nothing outside this package imports it; dbladder finds it by name (workloads/registry.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ...engines.base import Engine, Row, Table
from ..base import DataSpec, Sizes, Workload
from . import verify
from .data import SIZES, ChirpConfig, generate
from .endpoints import OPERATIONS
from .presets import PRESETS
from .schema import SCHEMA

__all__ = ["Chirp", "ChirpConfig", "workload"]


class Chirp(Workload):
    name = "chirp"
    description = (
        'the social app of "SQLite handled 315 million daily requests on a laptop": users, posts, '
        "follows, likes; the timeline is the heavy page"
    )
    schema = SCHEMA
    sizes = MappingProxyType(SIZES)
    operations = OPERATIONS
    presets = PRESETS
    source = "built-in"

    def generate(self, data: DataSpec) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
        return generate(ChirpConfig.of(data.sizes["users"], data.sizes["posts"], data.seed))

    def planned_rows(self, sizes: Sizes) -> dict[str, int]:
        return ChirpConfig.of(sizes["users"], sizes["posts"]).planned_rows()

    def validate_sizes(self, sizes: Sizes) -> list[str]:
        problems = super().validate_sizes(sizes)
        if problems:
            return problems
        missing = [name for name in self.sizes if name not in sizes]
        if missing:
            return [f"chirp needs the size {', '.join(missing)}"]
        return ChirpConfig.of(sizes["users"], sizes["posts"]).validate()

    async def verify(
        self,
        engine: Engine,
        data: DataSpec,
        acknowledged: Mapping[str, Sequence[tuple[Any, ...]]],
        before: Any = None,
    ) -> dict[str, Any]:
        return await verify.verify(engine, data.sizes["users"], data.sizes["posts"], acknowledged)


workload = Chirp()
