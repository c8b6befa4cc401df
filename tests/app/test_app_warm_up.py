"""`dbladder run --app` on a known-answer app (tests/app/known_app.py): one worker, exactly 10 ms a
request, so its warm capacity is 100 req/s; with a cold cost, the first request for each of its
100 item pages takes 40 ms more (4 s of work a cold app does once).

Measured on paper: the warm-up's first hits of an item take 50 ms and later ones 10 ms; the
calibration reads about 10 ms on one connection and 100 req/s on two; the search starts at 0.7 x
that, about 70 req/s, which the warm app holds (a FIFO below its capacity under evenly spaced
arrivals waits only its 10 ms) and climbs x2 to about 140, which fails; bisecting to 10 % ends
between 90 and 110. A cold first probe at 70 req/s would meet ~90 first hits in its 2 s, 3.6 s of
extra work, and fail.

Probes are held 2 s (0.5 s of it warm-up) and judged at p95 100 ms: above the capacity the queue
grows 10-40 requests a second, 100-400 ms of wait within the hold, so a probe 10 % over fails
while one at the capacity waits 10-20 ms.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import dbladder, dbladder_here

HERE = Path(__file__).resolve().parent
APP = f"{sys.executable} {HERE / 'known_app.py'}"
ITEMS = 100

REQUESTS = textwrap.dedent(
    """
    from dbladder.app.requests import Param, Request, Requests

    requests = Requests(
        requests=[
            Request("home", "GET", "/", weight=1),
            Request("item", "GET", "/items/{id}", weight=9,
                    params={"id": Param.rows("SELECT id FROM items")}),
        ],
    )
    """
)
# 100 answers are enough for these probes' p95 (the fifth slowest): a held probe waits 10-13 ms
# and a failed one 140 ms and more, so the default 200 would only lengthen the probes under 133
# req/s, all of these, by up to 1.6 s each.
PROBES = ["--p95", "100", "--hold", "2", "--warmup", "0.5", "--resolution", "10%", "--min-answers", "100"]


def app_run(tmp_path: Path, cold_ms: float, *extra: str) -> tuple:
    requests = tmp_path / "known_requests.py"
    requests.write_text(REQUESTS)
    out = tmp_path / "out"
    ran = dbladder(
        "run", "--db", f"sqlite:///{tmp_path / 'items.db'}", "--app", f"{APP} {{port}} 10 {cold_ms:g}",
        "--app-setup", f"{APP} setup {ITEMS}", "--app-dir", str(tmp_path), "--requests", str(requests),
        "--out", str(out), *PROBES, *extra,
        timeout=120,
    )  # fmt: skip
    result = json.loads((out / "result.json").read_text()) if (out / "result.json").exists() else None
    return ran, result


@pytest.mark.slow
@pytest.mark.serial
def test_the_default_search_on_a_cold_app_reports_its_warm_capacity(tmp_path):
    ran, result = app_run(tmp_path, 40, "--budget", "24")
    assert ran.returncode == 0, ran.stderr
    probes = [(level["offered_rps"], level["passed"]) for level in result["levels"]]
    assert abs(result["ceiling_rps"] - 100) <= 10, probes  # the warm capacity, within 10 %
    warm = result["warmup"]
    assert warm["stopped_because"] == "settled" and warm["first_hits"] == 1 + ITEMS
    rows = {row["request"]: row for row in warm["by_request"]}
    item = rows["item"]
    assert item["first_hits"] == ITEMS and item["failed"] == 0
    assert 48 <= item["first_ms"] <= 70, item  # 40 + 10 ms, and the round trip on a busy machine
    assert 9.5 <= item["settled_ms"] <= 20, item  # 10 ms
    assert 4.5 <= warm["seconds"] < 30  # 100 x 50 ms of first hits, one at a time
    calibration = result["search"]["calibration"]
    assert (
        result["config"]["search"]["start"] == calibration["start_rps"] == result["levels"][0]["offered_rps"]
    )
    assert probes[0][1], probes  # the first probe holds
    assert (
        "item: first 5" in ran.stdout and ", settled 1" in ran.stdout
    )  # "item: first 52 ms (...), settled 11 ms"
    assert "warm-up  warmed up in " in ran.stdout and "start    calibration: service time " in ran.stdout
    assert "warming up the app: 101 first hits (2 request(s))" in ran.stderr


@pytest.mark.slow
@pytest.mark.serial
def test_without_the_warm_up_the_search_still_reports_the_warm_capacity(tmp_path):
    # The same cold app, --no-app-warmup: the calibration's own closed loops meet the cold paths
    # first (its estimate was 93 req/s here), and a failure that does not repeat is probed again,
    # so the ceiling is still the warm capacity within 10 % (91.9 req/s measured).
    ran, result = app_run(tmp_path, 40, "--budget", "24", "--no-app-warmup")
    assert ran.returncode == 0, ran.stderr
    probes = [(level["offered_rps"], level["passed"]) for level in result["levels"]]
    assert result.get("warmup") is None
    assert abs(result["ceiling_rps"] - 100) <= 10, probes
    assert result["search"]["ceiling_rests_on"]["words"] in ran.stdout


@pytest.mark.slow
@pytest.mark.serial
def test_on_a_warm_app_the_calibration_estimates_the_capacity_and_the_first_probe_holds(tmp_path):
    ran, result = app_run(tmp_path, 0, "--budget", "4")  # room for one probe: the first
    assert ran.returncode == 0, ran.stderr
    calibration = result["search"]["calibration"]
    assert abs(calibration["estimate_rps"] - 100) <= 25, calibration  # within 25 % of the capacity
    assert 9.5 <= calibration["service_ms"] <= 20, calibration
    assert calibration["start_rps"] < 100 and calibration["share"] == 0.7
    (first,) = result["levels"]
    assert first["offered_rps"] == calibration["start_rps"] and first["passed"], first["reasons"]
    item = {row["request"]: row for row in result["warmup"]["by_request"]}["item"]
    assert abs(item["first_ms"] - item["settled_ms"]) <= 5  # no cold cost: first hits as warm as the rest


@pytest.mark.slow
@pytest.mark.serial
def test_no_app_warmup_and_a_start_given_leave_the_app_cold_and_the_start_as_given(tmp_path):
    ran, result = app_run(tmp_path, 0, "--no-app-warmup", "--start", "50", "--budget", "4")
    assert ran.returncode == 0, ran.stderr
    assert "warmup" not in result and "calibration" not in result["search"]
    assert [level["offered_rps"] for level in result["levels"]] == [50]
    assert "warming up" not in ran.stderr and "warm-up" not in ran.stdout


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--app-warmup", "0"], "--app-warmup must be above 0 and at most 3,600 seconds, not 0.0"),
        (["--app-warmup", "nan"], "--app-warmup must be above 0 and at most 3,600 seconds, not nan"),
        (["--app-warmup", "5", "--no-app-warmup"], "--app-warmup SECONDS and --no-app-warmup: give one"),
    ],
)
def test_a_warm_up_option_that_cannot_be_is_one_line_and_exit_2(tmp_path, options, line):
    requests = tmp_path / "known_requests.py"
    requests.write_text(REQUESTS)
    ran = dbladder_here(
        "run", "--db", f"sqlite:///{tmp_path / 'items.db'}", "--app", f"{APP} {{port}} 10 0",
        "--requests", str(requests), "--out", str(tmp_path / "out"), *options,
    )  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    assert line in ran.stderr and "Traceback" not in ran.stderr
    assert not (tmp_path / "out").exists()


def test_a_warm_up_option_without_an_app_is_one_line_and_exit_2(tmp_path):
    ran = dbladder_here("run", "--db", f"sqlite:///{tmp_path / 'x.db'}", "--app-warmup", "5")
    assert ran.returncode == 2 and "Error: --app-warmup goes with --app" in ran.stderr
