"""Which workers a run takes as its agents, and the ones it refuses (dbladder.cluster.coordinator)."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed", reason="needs the cluster extra: pip install 'dbladder[cluster]'")

from dbladder.cluster.coordinator import agents_of
from dbladder.cluster.joining import VersionsDiffer

MINE = {"dbladder": "0.1.0", "dask": "2026.8.0", "distributed": "2026.8.0", "python": "3.11.7"}
MACHINE = {"host": "load-host", "cpu_model": "AMD EPYC", "cores": 8, "memory_bytes": 2**34, "pid": 10}


def info(role, **versions):
    return {"role": role, "name": None, "versions": {**MINE, **versions}, "machine": MACHINE}


def test_the_agents_are_the_workers_with_a_role_named_as_the_scheduler_knows_them():
    described = {
        "tcp://10.0.0.2:40000": info("load"),
        "tcp://10.0.0.3:40000": info("db"),
        "tcp://10.0.0.4:40000": info(None),  # a plain Dask worker
        "tcp://10.0.0.5:40000": OSError("no dbladder there"),
    }
    names = {"tcp://10.0.0.2:40000": "load-1", "tcp://10.0.0.3:40000": "db-1", "tcp://10.0.0.4:40000": 0}
    agents = agents_of(described, names, MINE)
    assert [(agent.name, agent.role, agent.address) for agent in agents] == [
        ("load-1", "load", "tcp://10.0.0.2:40000"),
        ("db-1", "db", "tcp://10.0.0.3:40000"),
    ]


@pytest.mark.parametrize(
    ("differs", "words"),
    [
        ({"dbladder": "0.2.0"}, "dbladder 0.2.0"),
        ({"dask": "2025.1.0"}, "Dask 2025.1.0"),
        ({"python": "3.12.1"}, "Python 3.12.1"),
    ],
)
def test_an_agent_of_another_version_is_refused_in_one_line_naming_both(differs, words):
    described = {"tcp://10.0.0.2:40000": info("load", **differs)}
    with pytest.raises(VersionsDiffer) as refused:
        agents_of(described, {"tcp://10.0.0.2:40000": "load-1"}, MINE)
    line = str(refused.value)
    assert "\n" not in line
    assert "agent load-1 runs" in line and words in line
    assert "this coordinator dbladder 0.1.0, Dask 2026.8.0, Python 3.11.7" in line
