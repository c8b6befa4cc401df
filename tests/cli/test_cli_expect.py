"""`dbladder run` and `compare`'s exit codes for CI: an expectation not met exits 3 and still writes
everything; `--json` prints the result document, the same as result.json. Against servers and routes
whose figures are known in advance."""

from __future__ import annotations

import json
import sys

import pytest
from cli_support import dbladder
from known_servers import known_server

from dbladder.cli import main

SMALL = ["--size", "products=2000", "--size", "orders=5000"]
# Probes of 2 s from 150 req/s: 150, 300 and 600 (over the server's 400) fit in 12 s with their rests.
QUICK_SEARCH = ["--start", "150", "--hold", "2", "--warmup", "0.5", "--budget", "12"]


def run_against(server_url: str, tmp_path, *args: str):
    """`dbladder run` of the small shop data against a known server, its output in tmp_path/out."""
    database = f"sqlite:///{tmp_path}/x.db"
    out = str(tmp_path / "out")
    return dbladder("run", "--db", database, *SMALL, "--service", server_url, *args, "--out", out)


@pytest.mark.slow
def test_an_unmet_expectation_exits_3_writes_the_bundle_and_json_equals_result_json(tmp_path):
    # A FIFO server of capacity 400/s can never show a ceiling of 10,000,000 req/s.
    out = tmp_path / "out"
    with known_server("fifo", service_ms=2.5) as server:
        result = run_against(
            server.url,
            tmp_path,
            *QUICK_SEARCH,
            "--expect-ceiling",
            "10000000",
            "--expect-p95",
            "1000@150",
            "--json",
        )
    assert result.returncode == 3, result.stderr
    document = json.loads(result.stdout)
    assert document == json.loads((out / "result.json").read_text())
    for name in ("report.html", "report.md", "levels.csv", "timeseries.csv"):
        assert (out / name).exists(), name
    ceiling = document["ceiling_rps"]
    assert ceiling is not None and ceiling < 500
    assert (
        f"unmet    the ceiling was {ceiling:,.0f} req/s; expected at least 10,000,000 req/s\n"
        in result.stderr
    )
    assert "met      p95 at 150 req/s was " in result.stderr  # that one was met
    assert [check["met"] for check in document["expectations"]["checks"]] == [False, True]
    assert document["expectations"]["met"] is False


@pytest.mark.slow
def test_met_expectations_exit_0(tmp_path):
    with known_server("fifo", service_ms=2.5) as server:
        result = run_against(
            server.url,
            tmp_path,
            *QUICK_SEARCH,
            "--expect-ceiling",
            "100",
            "--expect-fail-pct",
            "1@150",
        )
    assert result.returncode == 0, result.stderr
    assert "ceiling  " in result.stdout and "unmet" not in result.stdout
    assert result.stdout.count("\nmet      ") == 2


@pytest.mark.slow
def test_p99_and_per_operation_expectations_against_a_server_that_stalls(tmp_path):
    # The stall server of tests/run/test_known_answers.py: 100 ms every second, at 200 req/s a
    # tenth of the requests wait uniformly 0-100 ms, so p95 is 50 ms and p99 90 ms, and each
    # operation's requests, spread over the same seconds, wait the same. The bounds leave room
    # for a busy machine, which can only add to a latency: p99 at most 70 ms cannot be met (90 ms,
    # read to within 6 ms there), a read's p95 at most 1 ms neither (a tenth of them wait), while
    # p99 at most 250 ms is met unless the machine adds 150 ms to one request in a hundred. The
    # pass mark's p95 is raised to 200 ms so that the one level holds and is the ceiling's.
    out = tmp_path / "out"
    with known_server("stall", period_s=1.0, stall_s=0.1) as server:
        result = run_against(
            server.url,
            tmp_path,
            *("--start", "200", "--step", "0", "--steps", "1", "--hold", "8", "--warmup", "1"),
            *("--writes", "0", "--p95", "200"),
            *("--expect-p95", "250@200"),  # met
            *("--expect-p99", "250@200", "--expect-p99", "70"),  # met, and not met at 90 ms
            *("--expect-p99", "product=250@200"),  # met
            *("--expect-p95", "product=1ms@200"),  # not met
        )
    assert result.returncode == 3, result.stderr
    document = json.loads((out / "result.json").read_text())
    (level,) = document["levels"]
    assert level["p99_ms"] >= 84, level["p99_ms"]
    checks = document["expectations"]["checks"]
    assert [(c["option"], c.get("operation"), c.get("rate"), c["met"]) for c in checks] == [
        ("--expect-p95", None, 200, True),
        ("--expect-p95", "product", 200, False),
        ("--expect-p99", None, 200, True),
        ("--expect-p99", None, None, False),
        ("--expect-p99", "product", 200, True),
    ], (level["p95_ms"], level["p99_ms"])
    assert checks[3]["found"] == level["p99_ms"] and checks[3]["level_rps"] == 200
    assert checks[2]["found"] == level["p99_ms"] and checks[0]["found"] == level["p95_ms"]
    assert checks[1]["found"] == level["operations"]["product"]["p95_ms"] > 1
    assert checks[4]["found"] == level["operations"]["product"]["p99_ms"]
    assert (
        f"unmet    p99 at the ceiling was {level['p99_ms']:g} ms (the 200 req/s level); "
        "expected at most 70 ms" in result.stdout
    )
    assert "unmet    p95 of product at 200 req/s was " in result.stdout
    assert result.stdout.count("\nmet      ") == 3
    report = (out / "report.md").read_text()
    assert "### Expectations" in report and "2 of 5 expectations not met" in report
    assert "| p99 at the ceiling at most 70 ms |" in report


@pytest.mark.slow
@pytest.mark.postgresql
def test_compare_checks_each_database_and_names_the_one_that_misses(postgres_url, tmp_path):
    # One PostgreSQL database by two routes: through a relay adding nothing, and through one adding
    # 150 ms to every chunk each way. Every request of the second needs at least one query, so at
    # least 300 ms, over the 250 ms timeout: exactly 100 % of its requests fail, while at 20 req/s
    # of reads the first would need more than half its requests to take over 250 ms to fail the
    # bound of half failed (they take a few ms, tens on a busy machine).
    out = tmp_path / "out"
    result = dbladder(
        "compare",
        *("--db", postgres_url, "--added-latency", "0", "--db", postgres_url, "--added-latency", "150"),
        *SMALL,
        *("--runs", "1", "--timeout", "0.25", "--writes", "0", "--workers", "1"),
        *("--start", "20", "--step", "0", "--steps", "1", "--hold", "3", "--warmup", "0.5"),
        *("--expect-fail-pct", "50@20"),
        "--out",
        str(out),
        timeout=300,
    )
    assert result.returncode == 3, result.stderr
    document = json.loads((out / "compare.json").read_text())
    direct, relayed = document["databases"]
    assert direct["expectations"] == {"met": True, "runs": 1, "unmet": []}
    line = "run 1: failed share at 20 req/s was 100 % (the 20 req/s level); expected at most 50 %"
    assert relayed["expectations"] == {"met": False, "runs": 1, "unmet": [line]}
    assert f"unmet    {relayed['label']} {line}\n" in result.stdout
    assert f"met      {direct['label']}: every expectation, in every run\n" in result.stdout
    by_label = {run["label"]: run for run in document["runs"]}
    # The direct route fails next to none: on a busy machine a request can pass the 250 ms timeout
    # (1 of its 50 measured, 2 %, beside the parallel suite at a load of 3), far from the relayed
    # route's 100 %.
    assert by_label[direct["label"]]["levels"][0]["fail_pct"] <= 10
    assert "### Expectations" in (out / "report.md").read_text()


@pytest.fixture
def invoke(capsys, monkeypatch):
    """`dbladder ARGS...` in this process, through `main` as the entry point runs it: (exit code,
    what it printed)."""

    def invoke(*args: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["dbladder", *args])
        code = 0
        try:
            main()
        except SystemExit as exited:
            code = int(exited.code or 0)
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    return invoke


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--expect-p95", "fast"],
            "Error: --expect-p95 takes a number, NUMBER@RATE or OPERATION=NUMBER@RATE "
            "(e.g. 25@1000, place_order=80@500), not 'fast'",
        ),
        (["--expect-p99", "80%"], "Error: --expect-p99 takes a number"),
        (["--expect-ceiling", "-5"], "--expect-ceiling must be above 0"),
        (["--expect-p99", "5@100", "--expect-p99", "9@100"], "--expect-p99 is given twice at 100 req/s"),
        (["--resolution", "five"], "--resolution takes a percentage (5%) or a fraction (0.05)"),
        (["--users", "10,20"], "--users applies to presets, not to the ceiling search; add --preset"),
        (["--preset", "quick", "--budget", "60"], "--budget applies to the ceiling search, not to a preset"),
    ],
)
def test_expectation_and_search_mistakes_are_usage_errors(args, message, tmp_path, invoke):
    code, output = invoke("run", "--db", f"sqlite:///{tmp_path}/x.db", *args, "--out", str(tmp_path / "o"))
    assert code == 2, output
    assert message in output and "Traceback" not in output


OPERATIONS = "its operations: product, page, order, create"


@pytest.mark.parametrize("command", ["run", "compare"])
def test_an_operation_the_workload_lacks_is_one_line_before_anything_runs(command, tmp_path, invoke):
    database = tmp_path / "x.db"
    code, output = invoke(command, "--db", f"sqlite:///{database}", "--expect-p95", "checkout=80@500")
    assert code == 2
    assert output == f"Error: --expect-p95: the shop workload has no operation 'checkout'; {OPERATIONS}\n"
    assert not database.exists()  # nothing seeded, nothing run


def test_expectations_come_from_the_environment_and_the_file_like_every_option(tmp_path, monkeypatch, invoke):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dbladder.toml").write_text(
        '[compare]\nexpect-p99 = ["nope=5"]\n[run]\nexpect-ceiling = -1\n'
    )
    assert invoke("compare", "--db", "sqlite:///x.db") == (
        2,
        f"Error: --expect-p99: the shop workload has no operation 'nope'; {OPERATIONS}\n",
    )
    code, output = invoke("run")
    assert code == 2 and "--expect-ceiling must be above 0 req/s, not -1" in output
    # Several values of a repeatable option in one variable, separated by spaces; the command
    # line wins over the variable.
    monkeypatch.setenv("DBLADDER_EXPECT_FAIL_PCT", "1@100 order=2 basket=3")
    assert invoke("run", "--expect-ceiling", "5") == (
        2,
        f"Error: --expect-fail-pct: the shop workload has no operation 'basket'; {OPERATIONS}\n",
    )
    code, output = invoke("run", "--expect-ceiling", "5", "--expect-fail-pct", "1", "--hold", "-1")
    assert code == 2 and output.startswith(
        "Error: invalid configuration:\n  - --hold must be above 0 seconds"
    )
    (tmp_path / "dbladder.toml").write_text('[run]\nexpect-p95 = "25"\n')
    assert invoke("run") == (2, "Error: dbladder.toml:2: [run] expect-p95: takes a list, e.g. ['25']\n")


def test_compare_help_lists_every_exit_code_and_the_expectations(invoke):
    code, text = invoke("compare", "--help")
    text = " ".join(text.split())
    assert code == 0
    assert "Exit codes: 0 success, 1 runtime error, 2 usage error, 3 an --expect-* not met, 4" in text
    for option in ("--expect-ceiling", "--expect-p95", "--expect-p99", "--expect-fail-pct"):
        assert option in text
