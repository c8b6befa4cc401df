"""Presets: named rounds. A workload brings its own (the posts' rounds, with their exact
parameters); `dbladder.load.presets` adds the ones every workload has."""

from __future__ import annotations

from dataclasses import dataclass

from .ladder import Ladder
from .users import UserPlan


@dataclass(frozen=True)
class Preset:
    """A named round: its plan (an arrival-rate ladder or users), its mix, and where it comes from.

    `write_share` None keeps the workload's own weights; `weights` names operations and their
    weights instead. `reference` is the published figure this round reproduces, for the report
    ("the post: 3,654 req/s on an Apple M1"), empty when there is none.
    """

    name: str
    description: str
    write_share: float | None = None
    ladder: Ladder | None = None  # open model: the arrival-rate ladder
    users: UserPlan | None = None  # closed model: users with think time, instead of a ladder
    # The engines' run settings it sets, by key (`dbladder.engine_registry.RunSetting`), e.g.
    # (("sqlite_writers", 1),): SQLite's one writer.
    engine_settings: tuple[tuple[str, int], ...] = ()
    weights: tuple[tuple[str, float], ...] | None = None
    reference: str = ""
    sizes: tuple[tuple[str, int], ...] = ()
