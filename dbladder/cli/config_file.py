"""Settings from outside the command line: `dbladder.toml` (or `--config FILE`) and `DBLADDER_<OPTION>`.

Click does the merging: every option reads the environment variable named after its long flag
(`--hold` reads DBLADDER_HOLD), and the file's table for a command (`[run]`, `[compare]`...) is
that command's `default_map`. So the precedence is click's own: the command line, then the
environment, then the file, then the option's default; `settings_of` asks click where each value
came from (`ctx.get_parameter_source`), for the result document.

The file is named before the command (`dbladder --config F run`) or after it (`dbladder run
--config F`, the one after wins): the group keeps what it was given, and each command's own
eager `--config` option (added by `prepare_command` as the command is loaded) reads the file
before any other option takes its value, and sets its table as the command's `default_map`.
The file is checked whole before the command runs: an unknown table or key, or a value the option
cannot take, is one line naming the file, the line and the key (exit 2).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ..errors import UsageError
from ..urls import DB_URL_ENV, redact

ENV_PREFIX = "DBLADDER_"
CONFIG_ENV = "DBLADDER_CONFIG"
DEFAULT_FILE = Path("dbladder.toml")
FILE_KEY = "dbladder.config_file"
"""Where the context's meta keeps the path of the file read, for `settings_of`."""
GIVEN_KEY = "dbladder.config_given"
"""Where the context's meta keeps the file given before the command (or None), for the command."""
CONFIG_PARAMETER = "config_file"
"""The name of the `--config` option, the one option that is not a setting."""

OWN_VARIABLES = {"db_url": DB_URL_ENV}
"""Options that read a variable of their own, with its own checks (--db: $DBLADDER_DB_URL)."""


def setting_name(option: click.Option) -> str:
    """The option's name in the file and in its variable: its longest flag without the dashes."""
    return max(option.opts, key=len).lstrip("-")


def envvar_of(option: click.Option) -> str:
    return ENV_PREFIX + setting_name(option).upper().replace("-", "_")


def options_of(command: click.Command) -> list[click.Option]:
    """The command's settings: its options but `--config`."""
    return [
        param
        for param in command.params
        if isinstance(param, click.Option) and param.name and param.name != CONFIG_PARAMETER
    ]


def prepare_command(command: click.Command) -> None:
    """Make `command` (a command of the top group, or a group under it) read its settings: each
    option its DBLADDER_<OPTION> variable and, for a command, `--config FILE` after its name."""
    name_environment(command)
    if isinstance(command, click.Group):  # its commands have no table, so no file
        return
    if not any(param.name == CONFIG_PARAMETER for param in command.params):
        command.params.append(
            click.Option(
                ["--config", CONFIG_PARAMETER],
                type=click.Path(dir_okay=False, path_type=Path),
                is_eager=True,  # read first, so every other option sees the file's values
                expose_value=False,
                callback=read_settings,
                help="Settings file, as `dbladder --config FILE` (see dbladder --help).",
            )
        )


def name_environment(command: click.Command) -> None:
    """Give every option of `command` (of each command under it, for a group) its DBLADDER_<OPTION>."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            name_environment(sub)
        return
    for option in options_of(command):
        if option.envvar is None and option.name not in OWN_VARIABLES:
            option.envvar = envvar_of(option)


def read_settings(ctx: click.Context, _param: click.Parameter, given: Path | None) -> None:
    """`--config`'s callback, which click calls whether or not it was given: the file (given after
    the command, else before it, else ./dbladder.toml) becomes the command's default_map."""
    if ctx.resilient_parsing:  # shell completion: no file errors while completing
        return
    root = ctx.find_root()
    path = config_path(given) if given is not None else root.meta.get(GIVEN_KEY) or config_path(None)
    if path is None:
        return
    if not isinstance(root.command, click.Group):
        raise TypeError("--config reads the table of a command of a group")
    ctx.default_map = read_config(path, root.command).get(ctx.info_name or "", {})
    ctx.meta[FILE_KEY] = path


def config_path(given: Path | None) -> Path | None:
    """The file to read: --config (or $DBLADDER_CONFIG, which click gives as the same option), else
    ./dbladder.toml when there is one."""
    if given is not None:
        if not given.is_file():
            raise UsageError(f"--config: no such file: {given}")
        return given
    return DEFAULT_FILE if DEFAULT_FILE.is_file() else None


def read_config(path: Path, group: click.Group) -> dict[str, dict[str, Any]]:
    """The file as click's default_map ({command: {parameter name: value}}), every value checked."""
    text = path.read_text(encoding="utf-8")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    lines = text.splitlines()
    ctx = click.Context(group)
    default_map: dict[str, dict[str, Any]] = {}
    for table, values in document.items():
        if not isinstance(values, Mapping):
            raise UsageError(
                f"{path}:{_line_of(lines, None, table)}: {table}: settings go in a table per command, "
                f"e.g. [run] then {table} = ..."
            )
        # Only the commands the file names are loaded (a lazy group imports each on demand).
        command = group.get_command(ctx, table) if table in group.list_commands(ctx) else None
        if command is None or isinstance(command, click.Group):
            every = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
            known = ", ".join(
                f"[{name}]"
                for name, cmd in every.items()
                if cmd is not None and not isinstance(cmd, click.Group)
            )
            raise UsageError(
                f"{path}:{_line_of(lines, None, table)}: [{table}] is not a command; tables: {known}"
            )
        default_map[table] = _table(path, lines, table, values, command)
    return default_map


def _table(
    path: Path, lines: list[str], table: str, values: Mapping[str, Any], command: click.Command
) -> dict[str, Any]:
    by_name: dict[str, click.Option] = {}
    for option in options_of(command):
        for name in {setting_name(option), *(opt.lstrip("-") for opt in option.opts if opt.startswith("--"))}:
            by_name[name] = by_name[name.replace("-", "_")] = option
    checked: dict[str, Any] = {}
    for key, value in values.items():
        where = f"{path}:{_line_of(lines, table, key)}: [{table}] {key}"
        found = by_name.get(key)
        if found is None:
            raise UsageError(
                f"{where}: dbladder {table} has no such option (dbladder {table} --help lists them)"
            )
        option = found
        try:
            if option.multiple:
                items = value if isinstance(value, list) else None
                if items is None:
                    raise click.BadParameter(f"takes a list, e.g. [{value!r}]")
                for item in items:
                    option.type.convert(item, option, None)
                value = list(items)
            else:
                option.type.convert(value, option, None)
        except click.BadParameter as exc:
            raise UsageError(f"{where}: {exc.message}") from None
        assert option.name is not None
        checked[option.name] = value
    return checked


def _line_of(lines: list[str], table: str | None, key: str) -> int | str:
    """The line of `key` (in `[table]`, or the table's own header when table is None): tomllib
    gives values, not where they were."""
    header = re.compile(r"^\s*\[\s*\"?([^\]\"]+)\"?\s*\]")
    assignment = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    current = None
    for number, line in enumerate(lines, start=1):
        found = header.match(line)
        if found:
            current = found.group(1).strip()
            if table is None and current == key:
                return number
            continue
        if current == table and assignment.match(line):
            return number
    return "?"


SOURCE_WORDS = {
    ParameterSource.COMMANDLINE: "command line",
    ParameterSource.ENVIRONMENT: "environment",
    ParameterSource.DEFAULT_MAP: "file",
    ParameterSource.DEFAULT: "default",
    ParameterSource.PROMPT: "prompt",
}


def settings_of(ctx: click.Context) -> dict[str, dict[str, Any]]:
    """Each option of the command as run: {"hold": {"value": 3.0, "source": "environment",
    "from": "DBLADDER_HOLD"}}. A database URL is written without its password."""
    settings: dict[str, dict[str, Any]] = {}
    config_file = ctx.find_root().meta.get(FILE_KEY)
    for option in options_of(ctx.command):
        assert option.name is not None
        source = ctx.get_parameter_source(option.name)
        setting: dict[str, Any] = {"value": _plain(ctx.params.get(option.name))}
        envvar = OWN_VARIABLES.get(option.name)
        if envvar and source == ParameterSource.DEFAULT and os.environ.get(envvar):
            setting.update(source="environment", **{"from": envvar})  # read by the option's callback
        else:
            setting["source"] = SOURCE_WORDS.get(source, "default") if source else "default"
            if source == ParameterSource.ENVIRONMENT:
                setting["from"] = option.envvar
            elif source == ParameterSource.DEFAULT_MAP:
                setting["from"] = str(config_file)
        if option.name.startswith("db_url"):  # run's --db, compare's repeated --db
            value = setting["value"]
            setting["value"] = [redact(v) for v in value] if isinstance(value, list) else redact(str(value))
        settings[setting_name(option)] = setting
    return settings


def _plain(value: Any) -> Any:
    """A value as JSON can hold it."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value
