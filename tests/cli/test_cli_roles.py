"""--cpus, --memory and --drop-caches on the command line: each bad input one line naming the
option, exit 2, nothing started; and the native client on the generator's CPUs against a managed
server on the database's."""

from __future__ import annotations

import json
import os

import pytest
from cli_support import dbladder
from managed_support import require_programs

SHARED_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
CPUS = sorted(os.sched_getaffinity(0))


def refused(*args: str) -> str:
    done = dbladder(*args, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--cpus", "client=0"], "--cpus client=0: no role 'client'"),
        (["--cpus", "generator=4096"], "--cpus generator=4096: CPU 4096 does not exist"),
        (["--memory", "database=512"], "--memory database=512: '512' is not a size with a unit"),
        (["--memory", "database=64M"], "--memory database=64M: below 128M"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(args: list[str], names: str) -> None:
    assert names in refused("bench", "--native", "--db", "managed:postgresql", *args)


def test_the_machines_own_server_is_never_pinned() -> None:
    line = refused("bench", "--native", "--db", SHARED_PG, "--cpus", f"database={CPUS[-1]}")
    assert line == (
        f"Error: --cpus database: {SHARED_PG} is a server dbladder did not start, and dbladder never "
        "pins or caps a server it does not own; use --db managed:postgresql"
    )


def test_drop_caches_is_refused_to_others_than_root() -> None:
    if os.geteuid() == 0:
        pytest.skip("root may drop the page cache")
    assert "--drop-caches: only root" in refused("bench", "--native", "--drop-caches")


@pytest.mark.slow
def test_the_native_client_on_the_generators_cpus_against_a_placed_server(tmp_path) -> None:
    require_programs("postgresql")
    generator, database = CPUS[0], CPUS[-1]
    done = dbladder(
        "bench", "--native", "--db", "managed:postgresql", "--scale", "0.01", "--seconds", "1",
        "--warmup", "0", "--cpus", f"generator={generator}", "--cpus", f"database={database}", "--json",
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    block = json.loads(done.stdout)
    assert block["cpus"] == str(generator)
    assert block["client"] == "pgbench" and block["ops_per_s"] > 0
