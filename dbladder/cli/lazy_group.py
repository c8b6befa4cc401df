"""A click group that imports a subcommand's module only when that subcommand is asked for.

Click's documented lazy-loading pattern (a `Group` whose `get_command` imports the command on
demand). Importing every command to parse one costs the whole library: numpy, the engines'
drivers, the report, the service... about 0.4 s before `dbladder --help` prints a line, paid by
every run and every test that starts the command. Each command's one-line help is written beside
its import path, so the group's own `--help` lists the commands without importing any
(tests/cli/test_lazy_group.py checks each line against the command's docstring).

`prepare` is called on each command as it is loaded: the settings (DBLADDER_<OPTION> and the
config file) attach to a command there, so nothing walks every command unless it needs to.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import click


class LazyCommand(NamedTuple):
    import_path: str
    """"module:attribute" of the click command."""
    short_help: str
    """Its line in the group's --help: its docstring's first sentence, which click shortens to fit."""


class LazyGroup(click.Group):
    """A group of commands imported by name the first time one is looked up."""

    def __init__(
        self,
        *args: Any,
        lazy_commands: Mapping[str, LazyCommand],
        prepare: Callable[[click.Command], None] = lambda command: None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands)
        self.prepare = prepare
        self._loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in self.lazy_commands:
            return super().get_command(ctx, cmd_name)
        if cmd_name not in self._loaded:
            module_name, attribute = self.lazy_commands[cmd_name].import_path.split(":")
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{module_name}:{attribute} is not a click command")
            self.prepare(command)
            self._loaded[cmd_name] = command
        return self._loaded[cmd_name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their one-line help as click writes them, the lazy ones' from the
        table: listing the commands must not import them."""
        rows: list[tuple[str, str | click.Command]] = []
        for name in self.list_commands(ctx):
            if name in self.lazy_commands and name not in self.commands:
                rows.append((name, self.lazy_commands[name].short_help))
                continue
            command = super().get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        # A stand-in command shortens the table's line exactly as click shortens a docstring.
        lines = [
            (name, (click.Command(name, help=h) if isinstance(h, str) else h).get_short_help_str(limit))
            for name, h in rows
        ]
        with formatter.section("Commands"):
            formatter.write_dl(lines)
