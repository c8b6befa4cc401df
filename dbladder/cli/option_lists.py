"""Applying a list of click options to a command, in the order the list gives them (click's
decorators apply bottom-up, so the list is applied from its end)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def with_options(command: Any, options: Sequence[Callable[[Any], Any]]) -> Any:
    """`command` with every option of `options`, shown in `--help` in the list's order."""
    for option in reversed(options):
        command = option(command)
    return command
