"""Runs over a cluster on loopback: a scheduler and load agents as processes of their own, against
the known-capacity FIFO server of tests/known_servers.py (docs/cluster.md).

Agent load-2's clock is shifted by CLOCK_SHIFT (DBLADDER_TEST_CLOCK_SHIFT, read only by the agent's
clock): the offset measured must recover it within half the fastest round trip, and a level that
holds its rate on both machines shows that the run start was translated into its clock.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="needs the cluster extra: pip install 'dbladder[cluster]'")

from cluster_support import DBLADDER, loopback_cluster
from known_servers import known_server

from dbladder.cluster.coordinator import Cluster
from dbladder.plans import Search
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

pytestmark = pytest.mark.slow

CLOCK_SHIFT = 250.0
SMALL = {"products": 2000, "orders": 5000}
AGENTS = {
    "load-1": {},
    "load-2": {"DBLADDER_TEST_CLOCK_SHIFT": str(CLOCK_SHIFT)},
    "db-1": {"role": "db"},
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with loopback_cluster(tmp_path_factory.mktemp("cluster"), AGENTS) as started:
        yield started


def config(cluster_address: str, url: str, folder: Path, plan, **changes) -> RunConfig:
    made = RunConfig(
        db_url=f"sqlite:///{folder}/shop.db",
        plan=plan,
        sizes=SMALL,
        service_url=url,
        out_dir=folder / "out",
        cluster=cluster_address,
    )
    return dataclasses.replace(made, **changes)


def test_an_injected_clock_offset_is_recovered_within_half_a_round_trip(cluster):
    with Cluster(cluster.address) as connected:
        offsets = connected.offsets()
    assert set(offsets) == {"load-1", "load-2", "db-1"}
    for name, shift in (("load-1", 0.0), ("load-2", CLOCK_SHIFT), ("db-1", 0.0)):
        found = offsets[name]
        assert found.bound == pytest.approx(found.round_trip / 2)
        assert abs(found.offset - shift) <= found.bound, (name, found)


@pytest.mark.serial
def test_the_search_ends_within_5_percent_of_a_fifo_servers_capacity(cluster, tmp_path):
    # Capacity 400/s (2.5 ms a request), the schedule split over two machines' generators: the
    # search climbs 150, 300, 600 (fails) and bisects to within 5 %, as on one machine
    # (tests/run/test_known_answers.py). A known answer of a rate: serial (in the parallel part,
    # beside a load of 5 to 10, the probe at 300/s failed by its p95 of 61.8 ms).
    # Probes of 2 s, as on one machine: 5 % over the capacity the last of the 1.5 measured seconds
    # waits about 100 ms, twice the mark.
    search = Search(start=150, hold=2.0, warmup=0.5, settle=0.5, budget=40)
    with known_server("fifo", service_ms=2.5) as server:
        result = run_round(config(cluster.address, server.url, tmp_path, search)).to_json()
    capacity = server.capacity
    probes = result["levels"]
    shown = [(level["offered_rps"], level["passed"], level["reasons"]) for level in probes]
    assert [level["offered_rps"] for level in probes[:3]] == [150, 300, 600], shown
    assert abs(result["ceiling_rps"] - capacity) <= 0.05 * capacity, shown
    for level in probes:
        # Every request due in the measured part of the level, from both machines together: request
        # i is due i / rate into the level, and those due from the warm-up's end to the level's end
        # are measured, exactly (the parts are disjoint and cover the schedule).
        rate, hold, warmup = level["offered_rps"], level["hold_s"], level["warmup_s"]
        due = [i / rate for i in range(math.ceil(rate * hold) + 1)]
        assert level["requests"] == sum(warmup <= moment < hold for moment in due)
        assert level["achieved_rps"] <= 1.02 * capacity
    machines = {machine["name"]: machine for machine in result["machines"]}
    assert {name: machine["role"] for name, machine in machines.items()} == {
        "coordinator": "coordinator",
        "load-1": "load",
        "load-2": "load",
        "db-1": "db",
    }
    for name in ("load-1", "load-2", "db-1"):
        assert machines[name]["clock"]["bound_s"] < 0.05 and machines[name]["cores"] >= 1
    # The db agent samples its host, here this very machine: over the levels' windows its CPU
    # reads as the coordinator's own sampler reads this machine's (both from /proc/stat, sampled
    # each second, placed by the agent's clock offset), and the level's database CPU is its host's.
    db_busy = [level["hosts"]["db-1"]["busy"] for level in probes]
    local_busy = [level["machine"]["host_busy"] for level in probes]
    assert abs(sum(db_busy) / len(db_busy) - sum(local_busy) / len(local_busy)) <= 10
    for level in probes:
        assert level["machine"]["database_cpu_from"] == "the host of db agent db-1"
        assert level["machine"]["database_cpu_pct"] == pytest.approx(
            level["hosts"]["db-1"]["busy"] * level["hosts"]["db-1"]["cores"]
        )
    assert (
        abs(machines["load-2"]["clock"]["offset_s"] - CLOCK_SHIFT) <= machines["load-2"]["clock"]["bound_s"]
    )
    assert result["generators"]["processes"] == 2
    assert json.loads((tmp_path / "out" / "result.json").read_text())["machines"] == result["machines"]
    report = (tmp_path / "out" / "report.md").read_text()
    machines_section = report.split("### Machines", 1)[1].split("\n### ", 1)[0]
    for name, role in (
        ("coordinator", "coordinator"),
        ("load-1", "load"),
        ("load-2", "load"),
        ("db-1", "db"),
    ):
        assert f"| {name} | {role} |" in machines_section
    assert "| level | offered req/s | db-1 |" in machines_section  # each level's CPU on the db host


def _level_count(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["levels"])
    except (OSError, ValueError, KeyError):
        return 0


LADDER = [
    "--start",
    "100",
    "--step",
    "100",
    "--steps",
    "4",
    "--hold",
    "3",
    "--warmup",
    "0.5",
    "--timeout",
    "1",
]


def _strike(
    tmp_path: Path,
    how: signal.Signals,
    agents: dict[str, dict[str, str]] | None = None,
    victim: str = "load-2",
    ladder: list[str] = LADDER,
    into_level: float = 1.0,
) -> tuple[subprocess.CompletedProcess[str], dict, float]:
    """A ladder over fresh agents (two load agents unless `agents`); once its first level is in
    result.json and `into_level` seconds more, `how` is sent to agent `victim` (the ladder goes on
    after a failed level: a busy machine may fail the first). The run's exit, its result, and
    seconds from the signal to the run's end."""
    with (
        loopback_cluster(tmp_path / "cluster", agents or {"load-1": {}, "load-2": {}}) as cluster,
        known_server("fifo", service_ms=1.0) as server,
    ):
        out = tmp_path / "out"
        command = [
            *DBLADDER, "run", "--cluster", cluster.address, "--service", server.url,
            "--db", f"sqlite:///{tmp_path}/shop.db", "--size", "products=2000", "--size", "orders=5000",
            *ladder, "--continue-after-fail", "--out", str(out),
        ]  # fmt: skip
        run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 90
            while _level_count(out / "result.json") < 1 and run.poll() is None:
                assert time.monotonic() < deadline, "the first level never finished"
                time.sleep(0.1)
            time.sleep(into_level)
            os.kill(cluster.agents[victim].pid, how)
            struck = time.monotonic()
            stdout, stderr = run.communicate(timeout=120)
            took = time.monotonic() - struck
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    return (
        subprocess.CompletedProcess(command, run.returncode, stdout, stderr),
        json.loads((out / "result.json").read_text()),
        took,
    )


def test_a_load_agent_killed_mid_level_stops_the_run_keeping_the_finished_levels(tmp_path):
    done, result, _ = _strike(tmp_path, signal.SIGKILL)
    assert done.returncode == 1, done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "load-2" in error[0], done.stderr
    finished = result["levels"]
    assert len(finished) >= 1
    struck = result["incomplete_level"]
    assert struck["agent"] == "load-2"
    assert struck["index"] == len(finished)  # the level running when the agent went
    assert struck["index"] not in [level["index"] for level in finished]  # neither passed nor failed
    assert result["status"] == "generator failed"


def test_a_stopped_load_agent_is_caught_by_the_levels_deadline(tmp_path):
    # The level is 3 s at most past its start, the request timeout 1 s, the grace 10 s: the run
    # ends within about 14 s of the SIGSTOP, with the struck level marked for the stopped agent.
    done, result, took = _strike(tmp_path, signal.SIGSTOP)
    assert done.returncode == 1, done.stderr
    assert result["incomplete_level"]["agent"] == "load-2"
    assert (
        "deadline" in result["incomplete_level"]["cause"] or "answer" in result["incomplete_level"]["cause"]
    )
    assert took < 40


def test_a_scheduler_that_does_not_answer_is_one_line_within_seconds(tmp_path):
    from cluster_support import free_port

    started = time.monotonic()
    done = subprocess.run(
        [
            *DBLADDER,
            "run",
            "--cluster",
            f"tcp://127.0.0.1:{free_port()}",
            "--db",
            f"sqlite:///{tmp_path}/x.db",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[-1].startswith("Error: no scheduler answered"), done.stderr
    assert not (tmp_path / "x.db").exists()
    assert took < 30  # the interpreter's start and Dask's import included, on a busy machine


def test_a_second_agent_of_a_taken_name_is_refused_in_one_line(cluster):
    done = subprocess.run(
        [*DBLADDER, "agent", "--scheduler", cluster.address, "--role", "load", "--name", "load-1"],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    taken = f"an agent named 'load-1' is already connected to {cluster.address}: give this one another --name"
    assert lines == [f"Error: {taken}"]


def test_a_run_over_tls_reaches_the_fifo_servers_ceiling(tmp_path):
    # The scheduler, one load agent and the coordinator all over tls://, with the files of
    # `dbladder scheduler --make-certs`: the search climbs to a failed level and finds a ceiling of
    # the FIFO server of capacity 400/s (never above it by more than 5 %; below it by at most a
    # quarter: one generator process on a machine shared by a load of 10 fell 7 % short, so the
    # 5 % known answer is the two-agent test's above), every level's requests all sent. Bisected
    # to 20 % (150, 300, 600, 424, 357 when all goes as on paper): two probes fewer than 5 %.
    pytest.importorskip("cryptography", reason="needs the cluster extra: pip install 'dbladder[cluster]'")
    from dbladder.cluster.security import make_certs

    make_certs(tmp_path / "tls")
    search = Search(start=150, hold=2.5, warmup=0.5, settle=0.5, budget=40, resolution=0.2)
    with (
        loopback_cluster(tmp_path / "cluster", {"load-1": {}}, tls=tmp_path / "tls") as cluster,
        known_server("fifo", service_ms=2.5) as server,
    ):
        assert cluster.address.startswith("tls://127.0.0.1:")
        assert "joined tls://" in cluster.agents["load-1"].text()
        result = run_round(
            config(cluster.address, server.url, tmp_path, search, cluster_tls=tmp_path / "tls")
        ).to_json()
    shown = [(level["offered_rps"], level["passed"]) for level in result["levels"]]
    assert shown[0] == (150, True) and not all(passed for _, passed in shown), shown
    assert 0.75 * server.capacity <= result["ceiling_rps"] <= 1.05 * server.capacity, shown
    for level in result["levels"]:
        assert level["requests"] == round(level["offered_rps"] * (level["hold_s"] - level["warmup_s"]))
    assert result["config"]["cluster_tls"] == str(tmp_path / "tls")
    assert [machine["name"] for machine in result["machines"]] == ["coordinator", "load-1"]
    assert result["machines"][1]["address"].startswith("tls://")


def test_a_db_agent_killed_mid_run_is_not_measured_from_then_on_and_the_run_goes_on(tmp_path):
    # Four levels of 3 s at 100 req/s (a quarter of the FIFO server's 1,000/s): once the first is
    # in result.json the db agent is killed; the run ends normally, the levels after the kill say
    # their db host is not measured, and the terminal says so once.
    done, result, _ = _strike(
        tmp_path,
        signal.SIGKILL,
        agents={"load-1": {}, "db-1": {"role": "db"}},
        victim="db-1",
        ladder=["--start", "100", "--step", "0", "--steps", "4", "--hold", "3", "--warmup", "0.5"],
        into_level=0.0,
    )
    stderr = done.stderr
    assert done.returncode == 0, stderr
    levels = result["levels"]
    assert len(levels) == 4 and result["status"] == "complete", stderr
    assert levels[0]["hosts"]["db-1"]["samples"] >= 1
    lost = [level for level in levels if level["hosts"]["db-1"].get("measured") is False]
    assert lost and lost[-1] is levels[-1], [level["hosts"] for level in levels]
    first_lost = levels.index(lost[0])
    assert all(level["hosts"]["db-1"].get("measured") is False for level in levels[first_lost:])
    for level in lost:
        assert level["hosts"]["db-1"]["cause"].startswith("agent lost: ")
        assert "database_cpu_pct" not in level["machine"]
        assert level["machine"]["database_cpu_from"].startswith("not measured: db agent db-1's agent lost")
    lines = [line for line in stderr.splitlines() if "db agent db-1" in line and "was lost" in line]
    assert len(lines) == 1 and "not measured from now on" in lines[0], stderr
    assert any(
        "agent db-1 was lost" in flag and f"from level {first_lost + 1} on" in flag
        for flag in result["flags"]
    )
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"db-1: not measured from level {first_lost + 1} on" in report
    assert "| not measured |" in report
    # The clocks were measured before every level, each its own measurement, before its window.
    moments = []
    for level in levels:
        clocks = level["clocks"]
        assert "load-1" in clocks["agents"]
        assert clocks["measured_s"] < level["warmup_s"]
        moments.append(level["start_s"] + clocks["measured_s"])
    assert len(set(moments)) == 4, [level["clocks"] for level in levels]
    assert "db-1" not in levels[-1]["clocks"]["agents"]


def test_an_agent_of_another_version_is_refused_when_the_run_takes_it(tmp_path, monkeypatch, capsys):
    # The agent reports dbladder 0.0.1 (DBLADDER_TEST_AGENT_VERSIONS, read only by an agent):
    # Dask's own scheduler lets it join (`dbladder scheduler` would not, test_joining.py), and
    # `run --cluster` refuses it in one line naming both versions, before anything runs.
    from cli_support import run_main

    from dbladder.cluster.settings import version_words, versions

    odd = {"DBLADDER_TEST_AGENT_VERSIONS": "dbladder=0.0.1,python=3.9.0"}
    with loopback_cluster(tmp_path / "cluster", {"load-old": odd}, plain_dask=True) as cluster:
        database = tmp_path / "shop.db"
        code, _, err = run_main(
            monkeypatch, capsys, "run", "--cluster", cluster.address, "--db", f"sqlite:///{database}"
        )
    mine = versions()
    theirs = version_words({**mine, "dbladder": "0.0.1", "python": "3.9.0"})
    assert code == 1
    error = [line for line in err.splitlines() if line.startswith("Error:")]
    assert error == [
        f"Error: agent load-old runs {theirs}, this coordinator {version_words(mine)}: "
        "install the same versions on every machine"
    ], err
    assert not database.exists()


def test_compare_over_the_cluster_runs_each_database_from_the_load_agents(cluster, tmp_path):
    # Two SQLite databases, one run each, a ladder of one 2 s level at 100 req/s to the FIFO
    # server (a quarter of its 400/s): both runs' load comes from the two load agents.
    from cli_support import dbladder

    with known_server("fifo", service_ms=2.5) as server:
        done = dbladder(
            "compare", "--cluster", cluster.address, "--service", server.url,
            "--db", f"sqlite:///{tmp_path}/a.db", "--db", f"sqlite:///{tmp_path}/b.db", "--runs", "1",
            "--size", "products=2000", "--size", "orders=5000",
            "--start", "100", "--step", "0", "--steps", "1", "--hold", "2", "--warmup", "0.5",
            "--out", str(tmp_path / "out"), timeout=240,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert len(document["runs"]) == 2
    for run in document["runs"]:
        roles = {machine["name"]: machine["role"] for machine in run["machines"]}
        assert roles == {"coordinator": "coordinator", "load-1": "load", "load-2": "load", "db-1": "db"}
        (level,) = run["levels"]
        assert level["requests"] == 150  # 100 req/s over the 1.5 measured seconds, from both agents
        assert set(level["clocks"]["agents"]) == {"load-1", "load-2", "db-1"}


def test_compare_to_a_scheduler_that_does_not_answer_stops_before_seeding(tmp_path):
    from cli_support import dbladder
    from cluster_support import free_port

    done = dbladder(
        "compare", "--cluster", f"tcp://127.0.0.1:{free_port()}",
        "--db", f"sqlite:///{tmp_path}/a.db", "--db", f"sqlite:///{tmp_path}/b.db",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("Error: no scheduler answered"), done.stderr
    assert not (tmp_path / "a.db").exists() and "seeding" not in done.stderr
