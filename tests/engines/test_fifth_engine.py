"""A fifth engine registered from outside dbladder's package runs a round end to end: `litecopy`
(tests/fifth_engine/), installed for the run's processes by tests/fifth_engine_support.py, with no
edit inside dbladder/."""

from __future__ import annotations

import json
import sqlite3

import pytest
from cli_support import dbladder
from fifth_engine_support import environment_with_litecopy

RATES = (20, 40)  # req/s: far below what SQLite answers, so the round is about the engine, not its limit
HOLD, WARMUP = 2.0, 0.5


@pytest.mark.slow  # about 12 s: seeding, a service with a writer process, two levels of 2 s
def test_a_run_on_an_engine_a_package_registers_names_it_and_uses_its_parts(tmp_path):
    env = environment_with_litecopy(tmp_path / "site")
    database = tmp_path / "copy.db"
    out = tmp_path / "out"
    # The engine's own run setting is an option of `run` (its registration declares it).
    shown = dbladder("run", "--help", env=env)
    assert "--litecopy-writers" in shown.stdout and "--sqlite-writers" in shown.stdout
    done = dbladder(
        "run",
        "--db", f"litecopy:///{database}",
        "--size", "products=100",
        "--size", "orders=100",
        "--start", str(RATES[0]),
        "--step", str(RATES[1] - RATES[0]),
        "--steps", "2",
        "--hold", str(HOLD),
        "--warmup", str(WARMUP),
        "--continue-after-fail",  # a busy disk may fail a level: both are climbed all the same
        "--workers", "1",
        "--litecopy-writers", "1",
        "--out", str(out),
        env=env,
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "result.json").read_text())
    assert result["engine"]["engine"] == "litecopy" and result["config"]["db_url"].startswith("litecopy:///")
    # Each level sent its schedule: offered rate times the measured window (hold less warm-up), the
    # count a clock-driven schedule gives; one either way for a due time on the window's edge.
    for level, rate in zip(result["levels"], RATES, strict=True):
        assert level["offered_rps"] == rate
        assert abs(level["requests"] - rate * (HOLD - WARMUP)) <= 1
    # Its run setting, under its own key beside SQLite's, started the service's one writer process,
    # and every write the run acknowledged went through it and is in the file the URL names.
    assert result["config"]["litecopy_writers"] == 1 and result["config"]["sqlite_writers"] == 0
    integrity = result["integrity"]
    assert integrity["passed"] and integrity["acknowledged"] > 0
    assert integrity["present"] == integrity["acknowledged"]
    assert result["service"]["stats"]["writer_writes"] >= integrity["acknowledged"]
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT count(*) FROM products").fetchone() == (100,)
    # The report words it with the engine's own label, settings file and setting.
    report = (out / "report.md").read_text()
    assert report.startswith("# LiteCopy 3.")
    assert "| LiteCopy writers | one writer process takes every write |" in report
    assert "PRAGMAs of LiteCopy, as the server reported them" in report
