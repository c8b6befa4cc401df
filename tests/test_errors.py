"""Every error a user can cause or meet is a DbladderError with its exit code (dbladder.errors), and
the CLI turns one into a single line and that code in one place (dbladder.cli.main)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import click
import pytest

import dbladder
from dbladder import cli
from dbladder.errors import DbladderError, ExpectationsUnmet, ReportedOutcome, UsageError
from dbladder.result.expectations import EXIT_UNMET
from dbladder.run.integrity import EXIT_WRITES_LOST, WritesLost

INTERNAL: dict[str, str] = {
    "dbladder.service.responses.HTTPError": "an HTTP answer raised inside a request handler; the "
    "service turns it into that answer, it never leaves the service",
    "dbladder.observe.breakdown.NoTiming": "a /stats answer without request-time histograms; the run "
    "leaves the level's breakdown out and goes on",
    "dbladder.result.part.UndeclaredKey": "a key that dbladder's own code gives a part of the result "
    "and the part does not declare (Part.updated): a mistake in the code, which no input reaches",
    "dbladder.run.levels.DatabaseLost": "the managed database lost during a level; the round catches "
    "it, keeps the levels and raises ServerLost",
}
"""Exception classes that are not DbladderErrors, each with why no user ever meets it."""

EXIT_CODES = {1, 2, EXIT_UNMET, EXIT_WRITES_LOST}


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a dbladder module, by its dotted name."""
    found = {}
    for module in pkgutil.walk_packages(dbladder.__path__, "dbladder."):
        if module.name.endswith("__main__"):
            continue
        for name, value in vars(importlib.import_module(module.name)).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.name
            ):
                found[f"{module.name}.{name}"] = value
    return found


def test_every_exception_class_is_a_dbladder_error_or_listed_as_internal() -> None:
    classes = exception_classes()
    assert len(classes) > 40, "the walk found too few classes to be looking in the right place"
    wrong = sorted(name for name, cls in classes.items() if not issubclass(cls, DbladderError))
    assert wrong == sorted(INTERNAL), "a new error a user can meet derives from DbladderError"


def test_every_internal_entry_still_names_a_class_that_is_not_a_dbladder_error() -> None:
    # When one becomes a DbladderError (or goes), take it off INTERNAL, so the list only shrinks.
    classes = exception_classes()
    stale = sorted(
        name for name in INTERNAL if name not in classes or issubclass(classes[name], DbladderError)
    )
    assert stale == []


def test_every_dbladder_error_has_a_documented_exit_code() -> None:
    for name, cls in exception_classes().items():
        if issubclass(cls, DbladderError):
            assert cls.exit_code in EXIT_CODES, name
            assert (cls.__doc__ or "").strip(), f"{name} says in a docstring when it is raised"
            if issubclass(cls, UsageError):
                assert cls.exit_code == 2, name
    assert ExpectationsUnmet.exit_code == EXIT_UNMET and WritesLost.exit_code == EXIT_WRITES_LOST


def _main(monkeypatch: pytest.MonkeyPatch, error: DbladderError) -> int:
    """Run the CLI's main on a command that raises `error`; its exit code."""

    @click.command("raise-for-test")
    def raising() -> None:
        raise error

    monkeypatch.setitem(cli.cli.commands, "raise-for-test", raising)
    monkeypatch.setattr("sys.argv", ["dbladder", "raise-for-test"])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return int(exited.value.code or 0)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (DbladderError("the server went away"), 1),
        (UsageError("--x takes a number"), 2),
        (WritesLost("3 acknowledged orders are missing"), 4),
    ],
)
def test_main_prints_one_line_and_the_errors_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: DbladderError, code: int
) -> None:
    assert _main(monkeypatch, error) == code
    captured = capsys.readouterr()
    assert captured.err == f"Error: {error}\n" and captured.out == ""


def test_a_reported_outcome_ends_with_its_code_and_no_line_of_its_own(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(monkeypatch, ExpectationsUnmet("ceiling 90 req/s, below 100")) == 3
    assert _main(monkeypatch, ReportedOutcome("printed already")) == 1
    assert capsys.readouterr().err == ""
