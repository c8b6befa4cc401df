"""The top group imports a command's module only when that command runs, and lists the commands
with the very lines their docstrings give."""

from __future__ import annotations

import subprocess
import sys

import click

from dbladder.cli import COMMANDS, cli

SHOW_IMPORTS = """
import sys
from dbladder.cli import main
sys.argv = ["dbladder", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
WATCHED = ("dbladder", "numpy", "psutil", "granian", "jsonschema")
print("IMPORTED", *sorted(name for name in sys.modules if name.startswith(WATCHED)))
"""


def _imported(*args: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", SHOW_IMPORTS, *args], capture_output=True, text=True, timeout=60, check=True
    )
    return set(result.stdout.split("IMPORTED", 1)[1].split())


def test_the_groups_help_imports_no_command():
    imported = _imported("--help")
    assert not {name for name in imported if name.startswith("dbladder.cli.") and name in _command_modules()}
    assert "numpy" not in imported and "psutil" not in imported and "dbladder.run" not in imported


def _command_modules() -> set[str]:
    return {entry.import_path.split(":")[0] for entry in COMMANDS.values()}


def test_each_commands_line_in_the_help_is_its_docstrings():
    ctx = click.Context(cli)
    for name, entry in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        for limit in (45, 80, 200):
            assert click.Command(name, help=entry.short_help).get_short_help_str(limit) == (
                command.get_short_help_str(limit)
            ), name


def test_every_command_is_listed_and_loads():
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    assert all(isinstance(cli.get_command(ctx, name), click.Command) for name in COMMANDS)
    assert cli.get_command(ctx, "nope") is None


def test_a_commands_help_imports_none_of_what_only_its_run_needs():
    # `run --help` (and a usage error) reads the options, not the service, the generator or the
    # result's schema checker: granian, numpy and jsonschema come with the round itself.
    imported = _imported("run", "--help")
    assert "dbladder.cli.run" in imported
    only_a_run = {"numpy", "granian", "jsonschema", "dbladder.run.round", "dbladder.load.fleet"}
    assert not imported & only_a_run
