"""The engines' run settings as command-line options: each option an engine's registration
declares (`dbladder.engine_registry.RunSetting`: SQLite's `--sqlite-writers`), on `run`, `compare`
and `serve`, so an engine another package registers brings its own options with it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click

from ..engine_registry import run_settings
from .option_lists import with_options


def engine_setting_options(*, preset: bool) -> list[Callable[[Any], Any]]:
    """One click option per registered run setting, its value under the setting's key. With
    `preset`, an option not given is None (the preset's own value holds, "[preset]" in its help);
    else it defaults to the setting's default."""
    options = []
    for key, (setting, _) in run_settings().items():
        options.append(
            click.option(
                setting.option,
                key,
                # Its range; a value inside it the setting does not take is the config's to refuse.
                type=click.IntRange(min(setting.choices), max(setting.choices)),
                default=None if preset else setting.default,
                show_default=not preset,
                help=setting.help + (" [preset]" if preset else ""),
            )
        )
    return options


def engine_settings_given(options: Mapping[str, Any]) -> dict[str, int]:
    """The run settings among a command's options that were given (None: not given)."""
    return {key: options[key] for key in run_settings() if options.get(key) is not None}


def with_engine_setting_options(command: Any) -> Any:
    """A command (`serve`) with every run setting's option, each defaulting to the setting's default."""
    return with_options(command, engine_setting_options(preset=False))
