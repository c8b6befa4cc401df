"""Named rounds: a workload's own (the posts' rounds, with their exact parameters) and the ones
every workload has.

`quick` is the default of `dbladder run`: a short ladder that finishes in about two minutes on a
laptop, to see the tool work before committing half an hour to a post's round.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import UsageError
from ..plans import Ladder, Preset
from ..workloads.base import Workload

GENERIC = {
    preset.name: preset
    for preset in (
        Preset(
            "quick",
            "a short ladder: the workload's own mix, 10 s steps",
            None,
            Ladder(250, 250, 10, 10, warmup=2),
        ),
    )
}

DEFAULT_PRESET = "quick"


def presets_for(workload: Workload) -> Mapping[str, Preset]:
    """Every preset a workload can run: its own first, then the generic ones it does not redefine."""
    return {**workload.presets, **{name: p for name, p in GENERIC.items() if name not in workload.presets}}


def get_preset(workload: Workload, name: str) -> Preset:
    """The preset called `name` for this workload, or UsageError naming the ones it has."""
    presets = presets_for(workload)
    try:
        return presets[name]
    except KeyError:
        raise UsageError(
            f"the {workload.name} workload has no preset {name!r}; its presets: {', '.join(presets)}"
        ) from None
