"""Faults with --cluster on loopback (docs/cluster.md): a kill-service on the service the app agent
started, by its PIDs on the agent's machine, and a kill-db of a throwaway managed PostgreSQL by
the db agent, the server in a registry only the db agent's machine (its environment) knows: the
coordinator could not have stopped it itself. Never the shared server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="needs the cluster extra: pip install 'dbladder[cluster]'")

from cluster_support import DBLADDER, loopback_cluster
from managed_support import require_programs

from dbladder.plans import Ladder
from dbladder.result.passmark import PassMark
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round
from dbladder.servers import server_for_url
from dbladder.servers.registry import ROOT_ENV

pytestmark = pytest.mark.slow

SMALL = {"products": 2000, "orders": 5000}
# Judged leniently: these tests are about the fault and the way back, not latency on a busy machine.
LENIENT = PassMark(p95_ms=10_000, max_fail_pct=100)
BACK_WITHIN_S = 30.0
"""The bound on back_after_s: the one-machine tests' (tests/run/test_faults.py)."""


def test_kill_service_on_the_app_agent_kills_its_service_there_and_it_comes_back(tmp_path):
    app_folder = tmp_path / "app-machine"
    app_folder.mkdir()
    with loopback_cluster(tmp_path / "cluster", {"load-1": {}}) as cluster:
        cluster.start_agent("app-1", "app", cwd=app_folder)
        cluster.wait_joined("app-1")
        config = RunConfig(
            db_url="sqlite:///shop.db",  # on the app agent's machine: its working folder
            plan=Ladder(40, 0, 2, 4.0),
            sizes=SMALL,
            workers=1,
            out_dir=tmp_path / "out",
            cluster=cluster.address,
            faults=("kill-service@1:1",),
            pass_mark=LENIENT,
            continue_after_fail=True,
        )
        result = run_round(config).to_json()
    assert result["status"] == "complete" and len(result["levels"]) == 2
    (fault,) = result["faults"]
    assert fault["state"] == "done", fault
    assert (fault["agent"], fault["agent_role"]) == ("app-1", "app")
    assert fault["detail"].startswith("on app agent app-1 (")
    assert "SIGKILL to the service's" in fault["detail"] and "started again in" in fault["detail"]
    # Struck 1 s into level 1 by the coordinator's clock; on the agent within the call's time.
    assert fault["at_s"] == pytest.approx(1.0, abs=0.5)
    assert fault["agent_at_s"] == pytest.approx(fault["at_s"], abs=0.5)
    assert 0 < fault["back_after_s"] < BACK_WITHIN_S
    struck, after = result["levels"]
    assert struck["faults"] == [fault] and sum(struck["failures"].values()) > 0, struck["failures"]
    assert "faults" not in after
    # Back: the next level is answered (at most a few stragglers of the restart's tail).
    assert sum(after["failures"].values()) <= 0.05 * after["requests"], after["failures"]
    assert result["service"]["agent"] == "app-1"
    print({key: fault[key] for key in ("at_s", "agent_at_s", "action_s", "back_after_s")}, struck["failures"])


def test_kill_db_by_the_db_agent_on_a_throwaway_managed_postgresql(tmp_path):
    require_programs("postgresql")
    # A registry of its own, not under tmp_path (closed to the postgres user the server runs as),
    # given only to the db agent and to the `db start` that makes the server.
    registry = Path(tempfile.mkdtemp(prefix="dbladder-test-servers-"))
    registry.chmod(0o755)
    env = {**os.environ, ROOT_ENV: str(registry)}
    started = subprocess.run(
        [*DBLADDER, "db", "start", "postgresql", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert started.returncode == 0, started.stderr
    server = json.loads(started.stdout)
    try:
        assert server_for_url(server["url"]) is None  # the coordinator's own registry knows nothing of it
        agents = {"load-1": {}, "db-1": {"role": "db", ROOT_ENV: str(registry)}}
        with loopback_cluster(tmp_path / "cluster", agents) as cluster:
            config = RunConfig(
                db_url=server["url"],
                target="direct",
                plan=Ladder(40, 0, 2, 4.0),
                sizes=SMALL,
                write_share=0.5,
                pool_size=4,
                generator_processes=1,
                out_dir=tmp_path / "out",
                cluster=cluster.address,
                faults=("kill-db@1:1",),
                pass_mark=LENIENT,
                continue_after_fail=True,
            )
            result = run_round(config).to_json()
    finally:
        subprocess.run([*DBLADDER, "db", "stop", server["name"]], env=env, capture_output=True, timeout=120)
        leftovers = sorted(path.name for path in registry.iterdir())
        shutil.rmtree(registry, ignore_errors=True)
    assert not leftovers, f"managed servers left behind: {leftovers}"
    assert result["status"] == "complete" and len(result["levels"]) == 2
    (fault,) = result["faults"]
    assert fault["state"] == "done", fault
    assert (fault["agent"], fault["agent_role"]) == ("db-1", "db")
    assert fault["detail"].startswith("on db agent db-1 (") and "crash recovery" in fault["detail"]
    assert fault["at_s"] == pytest.approx(1.0, abs=0.5)
    assert fault["agent_at_s"] == pytest.approx(fault["at_s"], abs=0.5)
    assert 0 < fault["back_after_s"] < BACK_WITHIN_S
    recorded = result["database_server"]
    assert (recorded["name"], recorded["agent"]) == (server["name"], "db-1")
    struck, after = result["levels"]
    assert struck["faults"] == [fault] and sum(struck["failures"].values()) > 0, struck["failures"]
    # The db agent found the server again after its restart: the next level's CPU is measured.
    assert after["machine"]["database_cpu_from"] == "the database's processes on db agent db-1"
    assert after["hosts"]["db-1"]["database_cpu_pct"] > 0, after["hosts"]
    # Durable settings: every acknowledged write survived the kill.
    integrity = result["integrity"]
    assert integrity["acknowledged"] > 20 and integrity["present"] == integrity["acknowledged"]
    assert (integrity["lost"], integrity["corrupted"], integrity["violations"]) == (0, 0, [])
    print({key: fault[key] for key in ("at_s", "agent_at_s", "action_s", "back_after_s")}, struck["failures"])
