"""The user's own web app under test (`--app CMD`): any framework, any language.

dbladder starts the app's command in a process group of its own, gives it the run's database in
the environment frameworks read (`environment.py`), waits until it answers, keeps its output
with passwords redacted, and stops everything it started (`process.py`). `--app-setup` runs the
app's own migrations or fixtures once before the round (`setup.py`).
"""

from .environment import app_environment, database_url_for_app
from .errors import AppExited, AppNeverReady, AppSetupFailed
from .process import AppCommand, RunningApp, running_app
from .setup import run_setup

__all__ = [
    "AppCommand",
    "AppExited",
    "AppNeverReady",
    "AppSetupFailed",
    "RunningApp",
    "app_environment",
    "database_url_for_app",
    "run_setup",
    "running_app",
]
