"""Lost writes end a run or a comparison with exit code 4 (dbladder.run.integrity)."""

from __future__ import annotations

from typing import Any

import pytest

from dbladder.result.run import Integrity, RunResult
from dbladder.run.integrity import WritesLost, raise_if_any_lost, raise_if_lost


def section(lost: int = 0, corrupted: int = 0) -> dict[str, Any]:
    return {
        "checked": True,
        "acknowledged": 10,
        "present": 10 - lost,
        "lost": lost,
        "corrupted": corrupted,
        "violations": [],
        "seconds": 0.5,
    }


def run(label: str, number: int, integrity: dict[str, Any] | None = None) -> RunResult:
    """A comparison's run as far as the check of its writes goes: its label, number and section."""
    document: dict[str, Any] = {"label": label, "run": number}
    return RunResult.from_json(document | ({"integrity": integrity} if integrity is not None else {}))


def test_a_run_that_kept_its_writes_or_was_not_checked_passes() -> None:
    raise_if_lost(None)
    raise_if_lost(Integrity.from_json(section()))
    raise_if_any_lost([run("sqlite", 1, section()), run("pg", 1)])


def test_lost_or_corrupted_writes_are_exit_code_4_naming_every_run() -> None:
    with pytest.raises(WritesLost) as one:
        raise_if_lost(Integrity.from_json(section(lost=2)))
    assert one.value.exit_code == 4 and "2 lost" in str(one.value)
    runs = [
        run("sqlite", 1, section()),
        run("postgresql", 2, section(lost=1)),
        run("mariadb", 1, section(corrupted=3)),
    ]
    with pytest.raises(WritesLost) as several:
        raise_if_any_lost(runs)
    message = str(several.value)
    assert message.startswith("postgresql run 2: integrity: 10 acknowledged, 9 present, 1 lost")
    assert "; mariadb run 1: " in message and "3 corrupted" in message and "sqlite" not in message
