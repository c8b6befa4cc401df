"""Run the command line as a user does: a separate process through the entry point, its output kept."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

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
