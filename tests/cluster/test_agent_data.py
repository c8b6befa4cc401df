"""The run's data on the agent that holds it (dbladder/run/agent_data.py, docs/cluster.md): a
comparison's snapshot kept and restored on the app agent's machine, where SQLite's file is, and
a failure there as one line with the finished levels kept.

Real processes on loopback: a scheduler, a load agent and an app agent working in a folder of its
own (its machine: the coordinator never opens the file there).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="needs the cluster extra: pip install 'dbladder[cluster]'")

from cluster_support import loopback_cluster

from dbladder.plans import Ladder
from dbladder.run.agent_data import AgentDataFailed
from dbladder.run.compare import CompareConfig, run_compare
from dbladder.run.config import RunConfig
from dbladder.run.progress import QuietProgress
from dbladder.run.round import run_round

pytestmark = pytest.mark.slow

SMALL = {"products": 2000, "orders": 5000}
ONE_LEVEL = Ladder(start=40, step=0, steps=1, hold=3.0, warmup=0.5)
"""One level well below what the service holds here: a third of its requests are writes, so about
40 orders a run."""


def orders_in(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT count(*) FROM orders").fetchone()[0]


class Watching(QuietProgress):
    """A progress that calls `on(message)` for every line the run says."""

    def __init__(self, on):
        self.on = on

    def message(self, text: str) -> None:
        self.on(text)


def test_a_cluster_comparison_restores_sqlites_snapshot_on_the_app_agent_before_every_run(
    tmp_path, monkeypatch
):
    app_folder = tmp_path / "app-machine"
    app_folder.mkdir()
    coordinator_folder = tmp_path / "coordinator"  # empty: whatever a user's own run left is not here
    coordinator_folder.mkdir()
    monkeypatch.chdir(coordinator_folder)
    database = app_folder / "shop.db"
    counts: dict[str, int] = {}  # orders when each run begins and when the second is announced

    def on(text: str) -> None:
        if text.startswith("run 2 of 2"):  # run 1 has written; the restore comes next
            counts["after run 1"] = orders_in(database)
        elif text.startswith("connecting to the cluster's scheduler"):  # a run begins, data restored
            counts[f"start of run {len([key for key in counts if key.startswith('start')]) + 1}"] = orders_in(
                database
            )

    with loopback_cluster(tmp_path / "cluster", {"load-1": {}}) as cluster:
        cluster.start_agent("app-1", "app", cwd=app_folder)
        cluster.wait_joined("app-1")
        base = RunConfig(
            db_url="sqlite:///shop.db",  # relative: the app agent's folder
            plan=ONE_LEVEL,
            sizes=SMALL,
            write_share=0.3,
            cluster=cluster.address,
        )
        config = CompareConfig(("sqlite:///shop.db",), base, runs=2, out_dir=tmp_path / "out", verify=True)
        document = run_compare(config, Watching(on)).to_json()
    assert not (coordinator_folder / "shop.db").exists()
    assert document["status"] == "complete"
    assert document["preparation"]["sqlite"]["method"] == "restore"
    assert counts["start of run 1"] == SMALL["orders"]
    assert counts["after run 1"] > SMALL["orders"], counts  # run 1 wrote orders
    assert counts["start of run 2"] == counts["start of run 1"], counts  # fresh data: as seeded
    first, second = document["runs"]
    assert second["fresh"]["method"] == "restore"
    assert first["fresh"]["checksum"] == second["fresh"]["checksum"]  # read on the agent, every row
    for run in document["runs"]:
        section = run["integrity"]
        assert section["checked"] and section["acknowledged"] > 0
        assert section["present"] == section["acknowledged"] and section["lost"] == 0
        assert section["checked_on"].startswith("app agent app-1")


def test_an_app_agent_lost_during_the_integrity_check_is_one_line_with_the_levels_kept(tmp_path):
    app_folder = tmp_path / "app-machine"
    app_folder.mkdir()
    with loopback_cluster(tmp_path / "cluster", {"load-1": {}}) as cluster:
        cluster.start_agent("app-1", "app", cwd=app_folder)
        cluster.wait_joined("app-1")

        def on(text: str) -> None:
            if text.startswith("checking the") and "acknowledged writes" in text:
                os.kill(cluster.agents["app-1"].pid, signal.SIGKILL)  # the check's agent gone
                cluster.agents["app-1"].popen.wait(timeout=10)

        config = RunConfig(
            db_url="sqlite:///shop.db",
            plan=ONE_LEVEL,
            sizes=SMALL,
            write_share=0.3,
            out_dir=tmp_path / "out",
            cluster=cluster.address,
        )
        with pytest.raises(AgentDataFailed) as failed:
            run_round(config, Watching(on))
    words = str(failed.value)
    assert "\n" not in words and failed.value.exit_code == 1
    assert words.startswith("the integrity check on app agent app-1 (") and "failed: " in words, words
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    (level,) = result["levels"]  # the finished level is kept
    assert level["requests"] > 0
    assert result["integrity"]["checked"] is False
    assert any(flag.startswith("the integrity check on app agent app-1") for flag in result["flags"])


def test_a_cluster_comparison_on_postgresql_makes_its_fresh_data_on_the_db_agent(tmp_path, postgres_url):
    said: list[str] = []
    with loopback_cluster(tmp_path / "cluster", {"load-1": {}, "db-1": {"role": "db"}}) as cluster:
        base = RunConfig(
            db_url=postgres_url,
            plan=ONE_LEVEL,
            sizes=SMALL,
            write_share=0.3,
            cluster=cluster.address,
        )
        config = CompareConfig((postgres_url,), base, runs=2, out_dir=tmp_path / "out", verify=True)
        document = run_compare(config, Watching(said.append)).to_json()
    assert document["status"] == "complete"
    method = document["preparation"]["postgresql"]["method"]  # whichever was faster here
    assert any(
        text.startswith(f"postgresql: every run gets its data by {method} on db agent db-1") for text in said
    )
    first, second = document["runs"]
    assert first["fresh"]["checksum"] == second["fresh"]["checksum"]  # read on the db agent, every row
    for run in document["runs"]:
        assert run["integrity"]["present"] == run["integrity"]["acknowledged"] > 0
        assert run["integrity"]["checked_on"].startswith("db agent db-1 (")
