"""The environment a run records, the idle check before it, and system-call counting."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import requires, version

import pytest
from cli_support import dbladder_here
from test_observe_flags import FakeHost

from dbladder.errors import UsageError
from dbladder.observe import count_syscalls, environment, fixed, idle_check, per_request, syscalls_unavailable
from dbladder.observe import syscalls as syscalls_module
from dbladder.observe.environment import data_size_bytes
from dbladder.run.observation import idle_check_seconds


def test_environment_names_the_machine_python_dependencies_and_engine(tmp_path):
    data = tmp_path / "shop.db"
    data.write_bytes(b"x" * 1000)
    (tmp_path / "shop.db-wal").write_bytes(b"x" * 24)
    engine = {"engine": "sqlite", "settings": {"cache_size": "-10240"}}
    found = environment(str(data), engine)
    json.dumps(found)  # saved in result.json as it is
    assert found["cpu_cores"] >= 1 and found["memory_total_bytes"] > 0
    assert found["cpu_model"] and found["kernel"]
    assert found["python"] == ".".join(map(str, sys.version_info[:3]))
    assert found["data_filesystem"]["type"] and found["data_filesystem"]["mountpoint"]
    # Every requirement of dbladder, with the version installed here.
    assert {"apsw", "asyncpg", "asyncmy", "numpy"} <= set(found["dependencies"])
    # One entry a package: a package two extras both require (the example app's, the tests') is
    # listed once.
    names = {
        re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line).group(1) for line in requires("dbladder") or []
    }
    assert len(found["dependencies"]) == len(names)
    assert found["dependencies"]["apsw"] == version("apsw")
    assert found["engine"] == engine
    assert data_size_bytes(str(data)) == 1024


def test_idle_check_judges_the_cpu_in_use():
    # FakeHost: 50 % user + 20 % system (less steal) and 30 % idle in every reading: 70 % busy.
    busy = idle_check(0.05, host_reader=FakeHost(steal_pct=0.0))
    assert busy["busy_pct"] == pytest.approx(70) and busy["idle"] is False
    assert isinstance(busy["busiest"], list)
    assert idle_check(0.05, threshold_pct=80, host_reader=FakeHost(steal_pct=0.0))["idle"] is True


def test_the_idle_check_lasts_two_seconds_unless_the_environment_says_otherwise(monkeypatch):
    monkeypatch.delenv("DBLADDER_IDLE_CHECK_SECONDS", raising=False)
    assert idle_check_seconds() == 2.0
    monkeypatch.setenv("DBLADDER_IDLE_CHECK_SECONDS", "0.3")
    assert idle_check_seconds() == 0.3
    for bad in ("0", "soon", "61"):
        monkeypatch.setenv("DBLADDER_IDLE_CHECK_SECONDS", bad)
        with pytest.raises(UsageError, match=f"from 0.1 to 60, not '{bad}'"):
            idle_check_seconds()


def test_a_bad_idle_check_setting_is_one_line_before_the_run_writes_anything(tmp_path):
    out = tmp_path / "out"
    finished = dbladder_here(
        "run", "--db", f"sqlite:///{tmp_path}/shop.db", "--out", str(out),
        env={**os.environ, "DBLADDER_IDLE_CHECK_SECONDS": "-1"},
    )  # fmt: skip
    assert finished.returncode == 2
    assert finished.stderr.strip() == (
        "Error: DBLADDER_IDLE_CHECK_SECONDS must be seconds from 0.1 to 60, not '-1'"
    )
    assert not out.exists() and not (tmp_path / "shop.db").exists(), list(out.iterdir())


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_strace_counts_a_sleeping_loop(monkeypatch):
    # bpftrace is preferred where present; this test is about strace.
    monkeypatch.setattr(syscalls_module, "TOOLS", ("strace",))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.002)"])
    try:
        counted = count_syscalls({"loop": fixed([sleeper.pid]), "database": lambda: []}, seconds=0.5)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert counted is not None and counted["tool"] == "strace"
    loop = counted["groups"]["loop"]
    assert loop["error"] is None and loop["pids"] == 1
    assert 50 < loop["calls"] < 1000  # about 250 sleeps in half a second
    assert "clock_nanosleep" in loop["top"]
    assert counted["groups"]["database"] == {"pids": 0, "calls": None, "top": {}, "error": "no processes"}
    assert per_request(counted, 100)["loop"] == loop["calls"] / 100


def test_without_a_tool_there_is_a_clear_message(monkeypatch):
    monkeypatch.setattr(syscalls_module.shutil, "which", lambda name: None)
    assert count_syscalls({"service": lambda: [1]}, seconds=0.1) is None
    message = syscalls_unavailable()
    assert message is not None and "bpftrace or strace" in message


def test_strace_output_is_read():
    text = (
        "% time     seconds  usecs/call     calls    errors syscall\n"
        "------ ----------- ----------- --------- --------- ----------------\n"
        " 60.00    0.000600           3       200           epoll_wait\n"
        " 40.00    0.000400           2       150        12 recvfrom\n"
        "------ ----------- ----------- --------- --------- ----------------\n"
        "100.00    0.001000           2       350        12 total\n"
    )
    assert syscalls_module._parse_strace(text) == {"epoll_wait": 200, "recvfrom": 150}
    assert syscalls_module._parse_strace("") is None
    printed = "Attaching 2 probes...\n\n@[12]: 5\n@[345]: 67\n"
    assert syscalls_module._parse_bpftrace(printed) == {12: 5, 345: 67}
