"""Run the command line as a user does: a separate process through the entry point, its output kept;
or, for a test of a message and an exit code, the same command in this process."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

COMMAND = [sys.executable, "-c", "from dbladder.cli import main; main()"]


def dbladder(
    *args: str,
    timeout: float = 120,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`dbladder ARGS...` to its end; without `env` it inherits this process's environment."""
    return subprocess.run(
        [*COMMAND, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env
    )


def run_main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """The entry point in this process (quicker than a new one): exit code, stdout and stderr."""
    from dbladder.cli import main

    monkeypatch.setattr(sys, "argv", ["dbladder", *args])
    try:
        main()
        code = 0
    except SystemExit as exited:
        code = int(exited.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def dbladder_here(
    *args: str, cwd: str | Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`dbladder ARGS...` in this process, through click's CliRunner: the same group and the same
    one-line errors and exit codes as the entry point (its `main` maps them), without the ~0.4 s a
    new interpreter takes to import. `env`, as for `dbladder`, replaces the whole environment.

    An exception the command does not turn into an exit code (a bug, a traceback for a user) is
    raised here, so the test fails on it as it would on a traceback in a subprocess's stderr."""
    from dbladder.cli import cli

    changes: dict[str, str | None] = {}
    if env is not None:
        changes = {name: None for name in os.environ if name not in env}
        changes.update(env)
    with contextlib.chdir(cwd or os.getcwd()):
        result = CliRunner().invoke(cli, list(args), env=changes, catch_exceptions=False)
    return subprocess.CompletedProcess(["dbladder", *args], result.exit_code, result.stdout, result.stderr)
