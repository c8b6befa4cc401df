"""A round's configuration (dbladder.run.config): every problem at once, loopback only unless
allowed, the database URL parsed once, and the config block results have always had."""

from __future__ import annotations

import dataclasses

import pytest

from dbladder.errors import InvalidConfig
from dbladder.plans import Ladder, Phase, Search, UserPlan
from dbladder.run.config import RunConfig
from dbladder.servers import ManagedDatabase
from dbladder.urls import DatabaseURL


def test_bad_configuration_lists_every_problem(tmp_path):
    with pytest.raises(InvalidConfig) as caught:
        RunConfig(
            db_url="oracle://x",
            plan=Ladder(0, -1, 0, 0),
            write_share=2,
            target="carrier-pigeon",
            service_url="ftp://x",
            out_dir=tmp_path,
        ).checked()
    text = str(caught.value)
    for fragment in ("db:", "start", "step", "steps", "hold", "write share", "target", "service URL"):
        assert fragment in text, fragment


def test_load_to_a_remote_address_needs_permission(tmp_path):
    with pytest.raises(InvalidConfig, match="not on a loopback address"):
        RunConfig(service_url="http://192.0.2.1:8000", out_dir=tmp_path).checked()
    RunConfig(service_url="http://192.0.2.1:8000", allow_remote_target=True, out_dir=tmp_path).checked()


def test_the_database_url_is_parsed_once_per_config_and_carried_parsed() -> None:
    config = RunConfig(db_url="postgresql://postgres:secret@127.0.0.1:5432/shop")
    assert isinstance(config.database, DatabaseURL) and config.database is config.database
    assert config.database.kind.has_server and config.database.host == "127.0.0.1"
    assert config.to_dict()["db_url"] == "postgresql://postgres:***@127.0.0.1:5432/shop"
    managed = RunConfig(db_url="managed:postgresql?shared_buffers=64MB")
    assert managed.database == ManagedDatabase(
        "managed:postgresql?shared_buffers=64MB", "postgresql", {"shared_buffers": "64MB"}
    )
    assert managed.to_dict()["db_url"] == "managed:postgresql?shared_buffers=64MB"
    assert dataclasses.replace(config, db_url="sqlite:///x.db").database.kind.in_process


@pytest.mark.parametrize(
    "plan",
    [Search(), Ladder(50, 50, 2, 1.5, warmup=0.5), UserPlan((Phase(10, 1.0, 2.0),))],
)
def test_the_config_block_keeps_the_plan_under_its_kind_where_results_always_had_it(plan) -> None:
    block = RunConfig(plan=plan, preset="x").to_dict()
    keys = list(block)
    assert keys[keys.index("preset") : keys.index("preset") + 4] == ["preset", "ladder", "users", "search"]
    assert "plan" not in block
    assert {kind: block[kind] is not None for kind in ("ladder", "users", "search")} == {
        kind: kind == plan.kind for kind in ("ladder", "users", "search")
    }
    assert block[plan.kind] == plan.to_json()


def test_faults_need_a_plan_whose_levels_are_known_before_the_run(tmp_path) -> None:
    with pytest.raises(InvalidConfig, match="--fault needs a ladder or users plan"):
        RunConfig(db_url="sqlite:///x.db", faults=("kill-service@1",), out_dir=tmp_path).checked()
