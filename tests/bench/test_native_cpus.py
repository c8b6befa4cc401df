"""The native client on the generator's CPUs (`bench --native --cpus generator=...`): pgbench and
sysbench are started on them, so they and direct mode are measured like with like."""

from __future__ import annotations

import os

import pytest

from dbladder.bench.native_config import NativeConfig
from dbladder.bench.native_tools import _tool
from dbladder.errors import InvalidConfig
from dbladder.roles import format_cpus

CPU = min(os.sched_getaffinity(0))


def test_the_client_runs_on_the_generators_cpus(tmp_path) -> None:
    # What the tool itself reads of its place, from inside the process it runs in.
    status = _tool(["cat", "/proc/self/status"], str(tmp_path), dict(os.environ), 5, (CPU,))
    assert f"Cpus_allowed_list:\t{CPU}\n" in status


def test_without_cpus_the_client_may_run_anywhere(tmp_path) -> None:
    status = _tool(["cat", "/proc/self/status"], str(tmp_path), dict(os.environ), 5)
    assert f"Cpus_allowed_list:\t{format_cpus(os.sched_getaffinity(0))}\n" in status


def test_one_process_per_cpu_it_may_run_on() -> None:
    assert NativeConfig(cpus=(CPU,)).process_count == 1


def test_cpus_not_allowed_are_refused() -> None:
    with pytest.raises(InvalidConfig, match="cpus 4096 are not all allowed"):
        NativeConfig(cpus=(4096,)).checked()
