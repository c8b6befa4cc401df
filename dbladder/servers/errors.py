"""The conditions a user meets with managed servers, each with a message that says what to do."""

from __future__ import annotations

from ..errors import DbladderError, UsageError


class ServerBinariesMissing(DbladderError):
    """The server programs are not installed; the message names the Debian package that has them."""


class ServerUserMissing(DbladderError):
    """Running as root, but the OS user the server must run as does not exist."""


class ServerStartFailed(DbladderError):
    """The server did not start or did not accept connections in time; the message ends with its log."""


class ServerKilledForMemory(DbladderError):
    """The kernel killed a managed server's process for passing the server's memory cap."""


class ServerLost(DbladderError):
    """A managed server was lost during a run's load (killed for memory, its process gone); the
    message says how, at which level, and where the levels finished before it are."""


class ServerStopFailed(DbladderError):
    """The server did not stop in time after it was asked to."""


class NotManaged(DbladderError):
    """A process, folder or URL that is not a server dbladder started; dbladder leaves it alone."""


class UnknownServer(UsageError):
    """No managed server of that name is registered (`dbladder db list` shows those that are)."""


class BadServerSpec(UsageError):
    """An engine name, setting or `managed:` text that cannot be used."""
