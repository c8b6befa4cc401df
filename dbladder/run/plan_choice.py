"""Which plan a round runs: a preset, or the ceiling search, with the options a user gave over it.

`dbladder run` and `dbladder compare` take the same plan options; `choose_plan` turns them into the
plan's pieces of a `RunConfig` (`PlanChoice.config_fields()`), or a UsageError that names the
options that do not go together:

    no --preset              -> the workload's default preset, else the ceiling search (`search`);
                                --step or --steps alone ask for the generic short ladder (`quick`)
    the ceiling search       -> --start, --hold, --warmup, --budget, --resolution, --min-answers
                                over its defaults;
                                --users and --ramp refused (they need a preset)
    a ladder preset          -> --start, --step, --steps, --hold, --warmup over its ladder
    a users preset (closed)  -> --users, --ramp, --hold over its phases; the ladder's options refused
    any preset               -> --budget, --resolution and --min-answers refused; --writes over its
                                write share (and then its own weights are dropped), the engines'
                                settings (--sqlite-writers) over its own
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..load.presets import DEFAULT_PRESET, get_preset
from ..plans import Phase, Plan, Preset, UserPlan
from ..plans.search import Search
from ..workloads.registry import load_workload
from .config import SEARCH_PLAN


@dataclass(frozen=True)
class PlanOptions:
    """The plan's options as the user gave them; None (or empty) for one not given.

    `users` and `resolution` are the options' text ("100,200,400", "5%"): reading them is part of
    choosing the plan, so a wrong one is refused in the same order as any other mistake."""

    preset: str | None = None
    start: float | None = None
    step: float | None = None
    steps: int | None = None
    hold: float | None = None
    warmup: float | None = None
    budget: float | None = None
    resolution: str | None = None
    min_answers: int | None = None
    users: str | None = None
    ramp: float | None = None
    writes: float | None = None
    # The engines' run settings given (--sqlite-writers), by key (`dbladder.engine_registry`).
    engine_settings: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class PlanChoice:
    """The plan chosen: its name, the one plan it runs, the mix and the data sizes it brings."""

    name: str
    plan: Plan
    write_share: float | None = None
    weights: dict[str, float] | None = None
    # The engines' run settings: the preset's, with the options' over them.
    engine_settings: dict[str, int] = dataclasses.field(default_factory=dict)
    # The preset's own data sizes; the user's --size settings go over them.
    sizes: dict[str, int] = dataclasses.field(default_factory=dict)
    # The preset itself (None for the ceiling search): its reference to a published figure.
    preset: Preset | None = None

    def config_fields(self) -> dict[str, Any]:
        """The RunConfig fields this choice sets (the sizes apart: they merge with --size)."""
        return {
            "preset": self.name,
            "plan": self.plan,
            "write_share": self.write_share,
            "weights": self.weights,
            "engine_settings": self.engine_settings,
        }


def choose_plan(workload_name: str, options: PlanOptions) -> PlanChoice:
    """The plan `options` ask of the workload named `workload_name`, or UsageError for a bad mix."""
    workload = load_workload(workload_name)
    preset_name = options.preset
    if preset_name is None and (options.step is not None or options.steps is not None):
        # --step or --steps ask for a ladder: the generic short one, with them over it.
        preset_name = DEFAULT_PRESET
    if preset_name is None:
        preset_name = workload.default_preset or SEARCH_PLAN
    if preset_name == SEARCH_PLAN:
        return PlanChoice(
            SEARCH_PLAN,
            _search(options),
            write_share=options.writes,
            engine_settings=dict(options.engine_settings),
        )
    search_only = [
        f"--{name.replace('_', '-')}"
        for name in ("budget", "resolution", "min_answers")
        if getattr(options, name) is not None
    ]
    _refuse(search_only, "the ceiling search, not to a preset")
    preset = get_preset(workload, preset_name)
    plan: Plan
    if preset.users is not None:
        plan = _users_plan(preset.users, options)
    elif preset.ladder is not None:
        names = ("start", "step", "steps", "hold", "warmup")
        plan = dataclasses.replace(
            preset.ladder,
            **{name: getattr(options, name) for name in names if getattr(options, name) is not None},
        )
    else:
        raise UsageError(f"the preset {preset.name!r} has neither a ladder nor users")
    return PlanChoice(
        preset.name,
        plan,
        write_share=preset.write_share if options.writes is None else options.writes,
        weights=dict(preset.weights) if preset.weights is not None and options.writes is None else None,
        engine_settings={**dict(preset.engine_settings), **options.engine_settings},
        sizes=dict(preset.sizes),
        preset=preset,
    )


def _fraction(text: str | None, option: str) -> float | None:
    """ "5%" or "0.05" as 0.05; None stays None."""
    if text is None:
        return None
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UsageError(f"{option} takes a percentage (5%) or a fraction (0.05), not {text!r}") from None


def _refuse(flags: list[str], applies_to: str) -> None:
    """UsageError when any of `flags` was given to a plan it does not apply to."""
    if flags:
        verb = "apply" if len(flags) > 1 else "applies"
        raise UsageError(f"{', '.join(flags)} {verb} to {applies_to}")


def _search(options: PlanOptions) -> Search:
    """The ceiling search with --start, --hold, --warmup, --budget, --resolution and --min-answers
    over its defaults."""
    ladder_only = ["--users"] if options.users else []
    ladder_only += ["--ramp"] if options.ramp is not None else []
    _refuse(ladder_only, "presets, not to the ceiling search; add --preset")
    changes: dict[str, Any] = {
        "start": options.start,
        "hold": options.hold,
        "warmup": options.warmup,
        "budget": options.budget,
        "resolution": _fraction(options.resolution, "--resolution"),
        "min_answers": options.min_answers,
    }
    return Search(**{name: value for name, value in changes.items() if value is not None})


def _users_plan(plan: UserPlan, options: PlanOptions) -> UserPlan:
    """The preset's users plan with --users, --ramp and --hold over it."""
    ladder_only = [
        f"--{name}" for name in ("start", "step", "steps", "warmup") if getattr(options, name) is not None
    ]
    if ladder_only:
        raise UsageError(f"{', '.join(ladder_only)} apply to ladder presets; this preset is closed (users)")
    phases = list(plan.phases)
    if options.users:
        try:
            counts = [int(part) for part in options.users.split(",")]
        except ValueError:
            raise UsageError(
                f"--users takes whole numbers separated by commas, not {options.users!r}"
            ) from None
        first = phases[0]
        phases = [Phase(count, first.ramp, first.hold) for count in counts]
    # --ramp sets every ramp except the spike's "at once" (0) jumps after the first phase.
    phases = [
        Phase(
            phase.users,
            phase.ramp if options.ramp is None or (phase.ramp == 0 and i) else options.ramp,
            phase.hold if options.hold is None else options.hold,
        )
        for i, phase in enumerate(phases)
    ]
    return dataclasses.replace(plan, phases=tuple(phases))
