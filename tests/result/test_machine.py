"""A level's machine figures, typed (dbladder.result.machine): either spelling, written back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from report_support import FLAT, NESTED

from dbladder.observe.summary import GROUP_KEYS, HOST_KEYS
from dbladder.result.machine import HostCpu, Machine, ServiceBreakdown, time_breakdown
from dbladder.result.run import RunResult

PREVIOUS = Path(__file__).parent / "fixtures" / "previous-release-users.json"


def test_the_flat_and_the_nested_spelling_read_the_same_figures():
    flat, nested = Machine.from_json(FLAT), Machine.from_json(NESTED)
    for machine in (flat, nested):
        assert machine.host_cpu == HostCpu(usr=41.5, sys=20.25, iowait=1.0, idle=37.25, steal=0.0)
        assert machine.load_average == 1.5
        assert (machine.group("service").cpu_pct, machine.group("service").cpu_ms_per_1k) == (88.0, 410.5)
        assert machine.group("generator").cpu_ms_per_1k is None
    assert flat.host_cpu.shares() == {"usr": 41.5, "sys": 20.25, "iowait": 1.0, "idle": 37.25, "steal": 0.0}
    assert flat.to_json() == FLAT and nested.to_json() == NESTED


def test_a_figure_that_is_not_a_number_is_not_measured():
    machine = Machine.from_json({"host_usr": True, "host": {"usr": 12}, "load1": float("nan")})
    assert machine.host_cpu.usr == 12.0 and machine.host_cpu.sys is None
    assert machine.load_average is None
    assert Machine.from_json({}).group("database").cpu_pct is None


def test_every_key_the_sampler_writes_is_a_field():
    groups = ("generator", "service", "database")
    written = {"seconds", "coverage", "samples", "requests", "groups", *HOST_KEYS} | {
        f"{group}_{key}" for group in groups for key in GROUP_KEYS
    }
    assert written - set(Machine.__dataclass_fields__) == set()


def test_the_service_time_is_read_where_it_was_kept_first_then_merged_into_the_machine():
    kept = ServiceBreakdown.from_json({"pool_wait_mean_ms": 1.5, "database_ms": 4})
    merged = Machine.from_json({"database_mean_ms": 9.0, "other_mean_ms": 0.5})
    assert time_breakdown(kept, merged).parts() == {"pool_wait": 1.5, "database": 4.0, "other": 0.5}
    assert time_breakdown(None, None).parts() == {}


def test_the_levels_of_a_saved_result_read_their_machine_as_typed_and_write_it_back():
    document = json.loads(PREVIOUS.read_text())
    result = RunResult.from_json(document)
    machines = [level.machine for level in result.levels]
    assert all(isinstance(machine, Machine) for machine in machines)
    assert result.to_json() == document
