"""How the user's app can misbehave, each a condition of its own (exit code 1)."""

from __future__ import annotations

from ..errors import DbladderError


class AppNeverReady(DbladderError):
    """The app's ready path did not answer below 500 within --app-ready-timeout."""


class AppExited(DbladderError):
    """The app's command exited while dbladder still needed it (at start or during the load)."""


class AppSetupFailed(DbladderError):
    """The --app-setup command exited with a code other than 0: nothing was loaded."""


class AppQueryFailed(DbladderError):
    """A request's `find` or an invariant failed when run after the load (the app dropped or
    changed a table meanwhile): the integrity check could not run, and says which query."""
