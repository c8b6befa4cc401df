"""Faults on a cluster, the quick part (no Dask): what a cluster run refuses before it connects,
and which db agent may stop the server (asked of each agent's machine, here this one). The runs
on real agents are tests/cluster/test_agent_faults.py."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from cli_support import run_main

from dbladder.plans import Ladder
from dbladder.run.cluster_faults import server_agent
from dbladder.run.config import RunConfig
from dbladder.run.faults import FaultRefused, parse_faults

CLUSTER = "tcp://127.0.0.1:8786"
SHARED = "postgresql://postgres@127.0.0.1:5432/test"


def problems(tmp_path, **given: Any) -> list[str]:
    config = RunConfig(
        **(
            {"db_url": f"sqlite:///{tmp_path}/x.db", "plan": Ladder(40, 0, 2, 3.0), "cluster": CLUSTER}
            | given
        )
    )
    return config.validate()


def test_a_cluster_run_takes_faults_on_its_own_service_and_leaves_the_server_to_the_db_agent(tmp_path):
    assert (
        problems(
            tmp_path, faults=("kill-service@1", "kill-writer@2:1"), engine_settings={"sqlite_writers": 1}
        )
        == []
    )
    # Not this machine's to judge: the db agent on the server's machine says whether it may stop it.
    assert problems(tmp_path, db_url=SHARED, faults=("kill-db@1:1",)) == []
    # The same fault on one machine is refused here, as before.
    (refused,) = problems(tmp_path, db_url=SHARED, faults=("kill-db@1:1",), cluster=None)
    assert refused.startswith(f"--fault kill-db@1:1: {SHARED} is not a server dbladder started")


def test_what_a_cluster_run_cannot_stop_is_refused_in_one_line_each(tmp_path):
    assert problems(tmp_path, db_url="managed:postgresql", faults=("restart-db@2",)) == [
        "--fault restart-db@2: with --cluster the db agent stops the server on its own machine; "
        "managed:postgresql would start one on this machine: start a managed server on the "
        "database's machine (`dbladder db start ENGINE --host ADDRESS` there) and give its URL"
    ]
    assert problems(tmp_path, service_url="http://127.0.0.1:9000", faults=("kill-service@1",)) == [
        "--fault kill-service@1: the load goes to http://127.0.0.1:9000, a service this run did not "
        "start; dbladder only stops the service it starts"
    ]
    assert problems(tmp_path, db_url=SHARED, target="direct", faults=("kill-service@1",)) == [
        "--fault kill-service@1: direct mode has no service to stop"
    ]
    assert problems(tmp_path, faults=("kill-db@1",)) == [
        "--fault kill-db@1: SQLite has no server; its data lives in the service's processes "
        "(kill-service, kill-writer)"
    ]


def test_the_command_refuses_it_with_exit_2_before_connecting(monkeypatch, capsys, tmp_path):
    args = ["run", "--cluster", CLUSTER, "--db", "managed:postgresql", "--fault", "kill-db@1"]
    args += ["--steps", "2", "--start", "10", "--step", "10", "--hold", "3", "--out", str(tmp_path / "out")]
    code, out, err = run_main(monkeypatch, capsys, *args)
    assert code == 2 and out == ""
    assert err == (
        "Error: invalid configuration:\n  - --fault kill-db@1: with --cluster the db agent stops the "
        "server on its own machine; managed:postgresql would start one on this machine: start a managed "
        "server on the database's machine (`dbladder db start ENGINE --host ADDRESS` there) and give "
        "its URL\n"
    )


class Agent:
    def __init__(self, name: str):
        self.name, self.role, self.machine = name, "db", {"host": "db-host"}


class Agents:
    """The part of the coordinator's `Cluster` that `server_agent` uses: its db agents, each on this
    machine (a call runs the function here, as the agent runs it on its own)."""

    address = CLUSTER

    def __init__(self, *names: str):
        self.agents = [Agent(name) for name in names]

    def placed(self, role: str) -> list[Agent]:
        return self.agents if role == "db" else []

    def run_here(self, agent: Agent, work: functools.partial) -> Any:
        assert agent in self.agents
        return work()


def test_a_server_fault_needs_a_db_agent_on_the_machine_of_a_managed_server():
    faults = parse_faults(["kill-service@1", "kill-db@2", "restart-db@3"])
    with pytest.raises(FaultRefused) as none:
        server_agent(Agents(), faults, SHARED)
    assert str(none.value) == (
        "--fault kill-db@2, restart-db@3: with --cluster the database server is stopped by the db agent "
        f"on its machine, and no db agent is connected to {CLUSTER}: start `dbladder agent --scheduler "
        f"{CLUSTER} --role db` on the server's machine"
    )
    with pytest.raises(FaultRefused) as not_managed:
        server_agent(Agents("db-1"), faults, SHARED)
    line = str(not_managed.value)
    assert line.startswith(
        "--fault kill-db@2, restart-db@3: no db agent is on the machine of a managed server it may stop: "
        f"db agent db-1 (db-host): {SHARED} is not a server dbladder started"
    )
    assert "\n" not in line
    # No fault on the server: no db agent is asked anything.
    assert server_agent(Agents(), parse_faults(["kill-service@1"]), SHARED) == (None, None)
