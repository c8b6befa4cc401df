"""Chirp: the social app of "SQLite handled 315 million daily requests on a laptop".

Users, posts, follows and likes at the post's cardinalities (50,000 users, 1,000,000 posts,
2,498,799 follows, 4,999,764 likes at scale 1), its pages (a post, a profile, the timeline) and
writes (a post, a like, a follow). The modules:

    schema      the tables and the indexes each query needs
    data        the deterministic generator (`ChirpConfig`, `generate`)
    operations  the SQL and one async function per operation
    endpoints   parse / draw / render / run per operation, in the workload interface's shape
    checks      row counts, checksum, invariants

`dbladder.data.chirp_seeding.seed_chirp` loads the data set through an engine's bulk path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ...engines.base import Row, Table
from .checks import checksum, row_counts, sizes_in, verify
from .data import POST_SIZES, ChirpConfig, generate, handle_of
from .endpoints import DEFAULT_MIX, MIXES, SPECS
from .schema import SCHEMA

NAME = "chirp"
DESCRIPTION = 'The social app of "SQLite handled 315 million daily requests on a laptop"'
SIZES = POST_SIZES  # the defaults at scale 1


def generate_rows(seed: int, sizes: Mapping[str, int]) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
    """The interface's `Workload.generate(seed, sizes)`: (table, chunks of rows) in load order."""
    return generate(ChirpConfig(seed=seed, **sizes))


def planned_rows(sizes: Mapping[str, int]) -> dict[str, int]:
    """The interface's `Workload.planned_rows(sizes)`: the exact row count of every table."""
    return ChirpConfig(**sizes).planned_rows()


__all__ = [
    "DEFAULT_MIX",
    "DESCRIPTION",
    "MIXES",
    "NAME",
    "POST_SIZES",
    "SCHEMA",
    "SIZES",
    "SPECS",
    "ChirpConfig",
    "checksum",
    "generate",
    "generate_rows",
    "handle_of",
    "planned_rows",
    "row_counts",
    "sizes_in",
    "verify",
]
