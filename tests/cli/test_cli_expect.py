"""`dbladder run`'s exit codes for CI: an expectation not met exits 3 and still writes everything;
`--json` prints the result document, the same as result.json. Against a server of known capacity."""

from __future__ import annotations

import json

import pytest
from cli_support import dbladder
from known_servers import known_server

SMALL = ["--size", "products=2000", "--size", "orders=5000"]
# Probes of 2 s from 150 req/s: 150, 300 and 600 (over the server's 400) fit in 12 s with their rests.
QUICK_SEARCH = ["--start", "150", "--hold", "2", "--warmup", "0.5", "--budget", "12"]


@pytest.mark.slow
def test_an_unmet_expectation_exits_3_writes_the_bundle_and_json_equals_result_json(tmp_path):
    # A FIFO server of capacity 400/s can never show a ceiling of 10,000,000 req/s.
    out = tmp_path / "out"
    with known_server("fifo", service_ms=2.5) as server:
        result = dbladder(
            "run",
            "--db",
            f"sqlite:///{tmp_path}/x.db",
            *SMALL,
            "--service",
            server.url,
            *QUICK_SEARCH,
            "--expect-ceiling",
            "10000000",
            "--expect-p95",
            "1000@150",
            "--json",
            "--out",
            str(out),
        )
    assert result.returncode == 3, result.stderr
    document = json.loads(result.stdout)
    assert document == json.loads((out / "result.json").read_text())
    for name in ("report.html", "report.md", "levels.csv", "timeseries.csv"):
        assert (out / name).exists(), name
    assert (
        "expected the ceiling was " in result.stderr and "expected at least 10,000,000 req/s" in result.stderr
    )
    assert "p95 at 150" not in result.stderr  # that one was met
    assert document["ceiling_rps"] is not None and document["ceiling_rps"] < 500


@pytest.mark.slow
def test_met_expectations_exit_0(tmp_path):
    with known_server("fifo", service_ms=2.5) as server:
        result = dbladder(
            "run",
            "--db",
            f"sqlite:///{tmp_path}/x.db",
            *SMALL,
            "--service",
            server.url,
            *QUICK_SEARCH,
            "--expect-ceiling",
            "100",
            "--expect-fail-pct",
            "1@150",
            "--out",
            str(tmp_path / "out"),
        )
    assert result.returncode == 0, result.stderr
    assert "ceiling  " in result.stdout and "expected" not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--expect-p95", "fast"], "--expect-p95 takes a number, or NUMBER@RATE"),
        (["--expect-ceiling", "-5"], "--expect-ceiling must be above 0"),
        (["--resolution", "five"], "--resolution takes a percentage (5%) or a fraction (0.05)"),
        (["--users", "10,20"], "--users applies to presets, not to the ceiling search; add --preset"),
        (["--preset", "quick", "--budget", "60"], "--budget applies to the ceiling search, not to a preset"),
    ],
)
def test_expectation_and_search_mistakes_are_usage_errors(args, message, tmp_path):
    result = dbladder("run", "--db", f"sqlite:///{tmp_path}/x.db", *args, "--out", str(tmp_path / "o"))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
