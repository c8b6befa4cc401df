"""How many generator processes a round runs and what each is given (dbladder.run.sizing)."""

from __future__ import annotations

import pytest

from dbladder.engines.base import EngineInfo
from dbladder.load.fleet import BadPartRange, PartRange
from dbladder.plans import Ladder, Phase, UserPlan
from dbladder.run.config import RunConfig
from dbladder.run.load_target import LoadTarget
from dbladder.run.preparation import Prepared
from dbladder.run.sizing import generator_processes, process_spec
from dbladder.workloads.base import DataSpec, Mix


def test_direct_mode_is_sized_to_the_machine(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    # SQLite runs in the generator processes: one per core, never one without a connection.
    assert generator_processes(RunConfig(target="direct", pool_size=100)) == 4
    assert generator_processes(RunConfig(target="direct", pool_size=3)) == 3
    # A server on this host keeps half the cores; over HTTP the service has them.
    server = "postgresql://postgres@127.0.0.1:5432/shop"
    assert generator_processes(RunConfig(db_url=server, target="direct", pool_size=100)) == 2
    assert generator_processes(RunConfig(target="http")) == 1
    assert generator_processes(RunConfig(target="direct", generator_processes=3)) == 3


def test_the_spec_is_the_configs_plan_and_settings_with_room_for_every_user() -> None:
    prepared = Prepared(
        EngineInfo.__new__(EngineInfo),
        None,
        DataSpec(1, {"products": 10, "orders": 20}),
        Mix({"get_product": 1.0}),
    )
    target = LoadTarget("127.0.0.1", 8000, db_url="sqlite:///relayed.db")
    plan = UserPlan((Phase(10, 0, 1), Phase(900, 0, 1)))
    config = RunConfig(plan=plan, pool_size=7, in_flight=100, timeout=3.0, mix_seed=5)
    spec = process_spec(config, prepared, target, processes=2)
    assert spec.plan is plan and spec.connections == 7 and spec.in_flight == 450
    assert (spec.host, spec.port, spec.db_url) == ("127.0.0.1", 8000, "sqlite:///relayed.db")
    assert (spec.mix, spec.sizes, spec.mix_seed, spec.timeout) == (
        prepared.mix,
        {"products": 10, "orders": 20},
        5,
        3.0,
    )
    ladder = process_spec(RunConfig(plan=Ladder(1, 0, 1, 1), in_flight=100), prepared, target, 2)
    assert ladder.in_flight == 100


def test_a_machine_that_shares_the_run_sends_its_range_of_the_parts() -> None:
    prepared = Prepared(EngineInfo.__new__(EngineInfo), None, DataSpec(1, {}), Mix({"get_product": 1.0}))
    target = LoadTarget("127.0.0.1", 8000)
    config = RunConfig(plan=UserPlan((Phase(900, 0, 1),)), in_flight=100)
    # One machine: every part, and the spec is today's.
    assert process_spec(config, prepared, target, 2).part_range is None
    # Parts 3-4 of 6: the 900 users are spread over all six processes of the run, 150 each.
    spec = process_spec(config, prepared, target, 2, PartRange(2, 2, 6))
    assert spec.part_range == PartRange(2, 2, 6) and spec.in_flight == 150
    with pytest.raises(BadPartRange, match="need 2 generator process"):
        process_spec(config, prepared, target, 3, PartRange(2, 2, 6))
