"""`--app-setup CMD`: the app's own migrations, fixtures or seed script, once, before the round."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from ..service.server import stop_process_tree
from .environment import secrets
from .errors import AppSetupFailed
from .process import launch, tail


def run_setup(
    command: str, directory: Path, environment: Mapping[str, str], log_path: Path | None = None
) -> float:
    """Run `command` to its end with the app's environment, its output redacted into `log_path`
    (appended: app.log shows the setup before the app); the seconds it took.

    AppSetupFailed with its exit code and last lines when it does not exit 0: nothing is loaded.
    """
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dbladder-setup-") as folder:
        log = log_path if log_path is not None else Path(folder) / "setup.log"
        process, copier = launch(command, directory, environment, log, secrets(environment))
        try:
            code = process.wait()
        finally:  # also on Ctrl-C: nothing the setup started outlives it
            stop_process_tree(process, 5.0)
            copier.join()
        if code != 0:
            raise AppSetupFailed(
                f"the app's setup exited with code {code} (command: {command}); "
                f"its last lines: {tail(log)}; nothing was loaded"
            )
    return time.monotonic() - began
