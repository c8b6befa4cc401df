"""The one-machine path never imports Dask, and a cluster command without the extra says what to
install (exit 2). Each check runs in a fresh interpreter, whose sys.modules is its own."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from known_servers import known_server

DASK = ("dask", "distributed")

LOADED = f"""
import sys
print([name for name in sys.modules if name.split('.')[0] in {DASK!r}])
"""


def python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_run_help_imports_no_dask():
    code = (
        "from dbladder.cli import cli\n"
        "try:\n    cli.main(['run', '--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
    )
    done = python(code + LOADED)
    assert done.returncode == 0, done.stderr
    assert "--cluster" in done.stdout  # the option is there; Dask is not loaded for it
    assert done.stdout.strip().splitlines()[-1] == "[]"


ROUND = """
import dataclasses, json, sys
from pathlib import Path
from dbladder.plans import Ladder
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

if __name__ == "__main__":
    url, folder = sys.argv[1], Path(sys.argv[2])
    config = RunConfig(
        db_url=f"sqlite:///{folder}/shop.db", plan=Ladder(100, 0, 1, 1.0, warmup=0.2),
        sizes={"products": 200, "orders": 500}, service_url=url, out_dir=folder / "out",
    )
    result = run_round(config).to_json()
    print(json.dumps([level["requests"] for level in result["levels"]]))
"""


@pytest.mark.slow
def test_a_round_on_one_machine_imports_no_dask(tmp_path):
    # 100 req/s for 1 s, 0.2 s of it warm-up: 80 requests measured, against a server that answers at once.
    with known_server("fifo", service_ms=0.1) as server:
        done = python(ROUND + LOADED, server.url, str(tmp_path))
    assert done.returncode == 0, done.stderr
    requests, loaded = done.stdout.strip().splitlines()[-2:]
    assert json.loads(requests) == [80]
    assert loaded == "[]"


WITHOUT_DASK = """
import sys
sys.modules['dask'] = None  # an import of it now fails, as where the extra is not installed
sys.modules['distributed'] = None
from dbladder.cli import main
sys.argv = ['dbladder', *sys.argv[1:]]
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("run", "--cluster", "tcp://127.0.0.1:9", "--db", "sqlite:///unused.db"),
        ("agent", "--scheduler", "tcp://127.0.0.1:9", "--role", "load"),
        ("scheduler",),
    ],
    ids=["run", "agent", "scheduler"],
)
def test_a_cluster_command_without_the_extra_says_what_to_install(args, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_DASK, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'dbladder[cluster]'" in lines[0]
    assert not (tmp_path / "unused.db").exists()  # refused before anything ran
