"""Errors a user can act on.

Every condition a user can cause or fix has its own small class with a message that says what
to do, and its exit code: 2 for `UsageError`, 1 for the others unless the class says otherwise
(3 `ExpectationsUnmet`, 4 `WritesLost` in run/integrity.py). Classes of one package's own
conditions may live beside the code that raises them; every one derives from `DbladderError`
(tests/test_errors.py checks it). The CLI's `main` is the one place that turns them into one
line, `Error: <message>`, and the exit code: a user mistake never shows a traceback.
"""

from __future__ import annotations


class DbladderError(Exception):
    """Base for every error dbladder reports to a user (exit code 1)."""

    exit_code = 1


class UsageError(DbladderError):
    """The command line or configuration is wrong (exit code 2)."""

    exit_code = 2


class BadURL(UsageError):
    """A database URL that cannot be parsed or misses a required part."""


class UnknownEngine(UsageError):
    """A URL scheme that names no engine dbladder knows."""


class InvalidConfig(UsageError):
    """One or more configuration fields are invalid; the message lists every problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid configuration:\n  - " + "\n  - ".join(problems))


class ServerUnreachable(DbladderError):
    """The database server did not accept a connection."""


class AuthenticationFailed(DbladderError):
    """The server refused the user name or password."""


class MissingDatabase(DbladderError):
    """The server has no database of the given name."""


class NotWritable(DbladderError):
    """A SQLite path whose file or folder cannot be created or written."""


class NotSeeded(DbladderError):
    """The database has no tables or data of the workload; `dbladder seed` creates them."""


class PoolTimeout(DbladderError):
    """No pooled connection became free in time (the service answers 503)."""


class Conflict(DbladderError):
    """A well-formed request the data cannot fill (the service answers 409): out of stock, already done.

    Workloads raise it (or a subclass) inside a transaction, so the transaction rolls back. `code`
    is a short machine word for the JSON error body, `details` are its extra fields.
    """

    def __init__(self, code: str, message: str, **details: object):
        super().__init__(message)
        self.code = code
        self.details = details


class DuplicateKey(Conflict):
    """A write in a transaction would have stored a second row with the same primary key or unique
    index values, and the transaction was rolled back (the service answers 409).

    Every engine raises it for its own driver's condition (SQLite's UNIQUE and PRIMARY KEY
    constraints, PostgreSQL's SQLSTATE 23505, MariaDB's error 1062), so a workload that inserts
    a row a concurrent request may have inserted first catches this instead of three drivers'
    errors. `__cause__` is the driver's error.
    """

    def __init__(self, message: str):
        super().__init__("duplicate_key", message)


class DatabaseTimeout(DbladderError):
    """The database did not finish in time (e.g. SQLite's write lock stayed busy); the service answers 503."""


class InvalidRequest(DbladderError):
    """A request to the web service that fails validation; the service answers 400 with this message."""


class WriterUnavailable(DbladderError):
    """The service's single SQLite writer process is not answering (the service answers 503)."""


class ServiceFailed(DbladderError):
    """The web service did not start, or a process of it died; the message says why (and shows its log)."""


class PortInUse(DbladderError):
    """Something already listens on the address the service was asked to bind."""


class BundleError(DbladderError):
    """A result bundle (a folder with result.json or compare.json) that cannot be read."""


class MissingBundle(UsageError, BundleError):
    """The path given is not a bundle: no such folder, or no result.json or compare.json in it (exit 2)."""


class CorruptBundle(BundleError):
    """A bundle's JSON cannot be parsed or does not match its schema; the message names the field."""


class UnknownBundleVersion(UsageError, BundleError):
    """A bundle written under a schema version this dbladder does not read (a newer or older release):
    the message names the release that wrote it, to be read with that one (exit 2)."""


class ReportedOutcome(DbladderError):
    """An outcome the command has already printed in full, which still decides its exit code: the
    CLI adds no line of its own."""


class ExpectationsUnmet(ReportedOutcome):
    """A run's result did not meet an `--expect-*` (exit code 3, like k6's 99 for a failed
    threshold); the run printed which, and still wrote everything."""

    exit_code = 3


class InstancesDisagree(ReportedOutcome):
    """`dbladder check-instances`: an order created through one instance does not show through the
    other (exit code 1); the command printed both answers."""


class TransportUnavailable(UsageError):
    """The engine or server offers no such transport (SQLite is in-process; a server without a socket)."""


class TransportFailed(DbladderError):
    """The server names a socket or port, but connecting that way failed."""
