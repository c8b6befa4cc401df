"""--cpus, --memory and --drop-caches on the command line: each bad input one line naming the
option, exit 2, nothing started; and the native client on the generator's CPUs against a managed
server on the database's."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from cli_support import dbladder, run_main
from managed_support import require_programs
from privilege_support import as_nobody

from dbladder.roles import memory_hierarchy, memory_problem

SHARED_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
CPUS = sorted(os.sched_getaffinity(0))


# Each command as a user would give it a database, and the role a --memory of it caps (serve
# places the service only).
COMMANDS = {
    "run": (["run", "--db", "managed:postgresql"], "database"),
    "compare": (["compare", "--db", "managed:postgresql", "--db", "managed:mariadb"], "database"),
    "serve": (["serve", "--db", "sqlite:///shop.db"], "service"),
    "bench": (["bench", "--native", "--db", "managed:postgresql"], "database"),
}
BAD = {
    "unknown role": (["--cpus", "client=0"], "--cpus client=0: no role 'client'"),
    "CPU out of range": (["--cpus", "generator=4096"], "--cpus generator=4096: CPU 4096 does not exist"),
    "size without a unit": (
        ["--memory", "{role}=512"],
        "--memory {role}=512: '512' is not a size with a unit",
    ),
    "size below the floor": (["--memory", "{role}=64M"], "--memory {role}=64M: below 128M"),
}


def refused_here(monkeypatch, capsys, tmp_path: Path, *args: str) -> str:
    """The one line of a refusal by the entry point in this process, after checking that it exits
    2 and started nothing: no server in the registry, no result folder, no database file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DBLADDER_SERVERS_DIR", str(tmp_path / "servers"))
    code, out, err = run_main(monkeypatch, capsys, *args)
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert list(tmp_path.iterdir()) == []
    return lines[0]


@pytest.mark.parametrize("bad", BAD, ids=list(BAD))
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_a_bad_placement_in_one_line(
    monkeypatch, capsys, tmp_path, command, bad
) -> None:
    args, role = COMMANDS[command]
    options, names = BAD[bad]
    line = refused_here(monkeypatch, capsys, tmp_path, *args, *(o.format(role=role) for o in options))
    assert line.startswith("Error: ") and names.format(role=role) in line


@pytest.mark.parametrize("command", ["run", "compare", "bench"])
def test_the_machines_own_server_is_refused_by_every_command(monkeypatch, capsys, tmp_path, command) -> None:
    args = {
        "run": ["run"],
        "compare": ["compare", "--db", "managed:postgresql"],
        "bench": ["bench", "--native"],
    }
    for option in ("--cpus", "--memory"):
        value = f"database={CPUS[-1]}" if option == "--cpus" else "database=512M"
        line = refused_here(monkeypatch, capsys, tmp_path, *args[command], "--db", SHARED_PG, option, value)
        # A comparison's managed: entry may be placed; its other, the machine's own server, may not.
        assert line == (
            f"Error: {option} database: {SHARED_PG} is a server dbladder did not start, and dbladder "
            "never pins or caps a server it does not own; use --db managed:postgresql"
        )


@pytest.mark.parametrize("command", ["run", "compare", "bench"])
def test_a_cap_a_managed_server_cannot_run_under_is_refused(monkeypatch, capsys, tmp_path, command) -> None:
    args, _ = COMMANDS[command]
    line = refused_here(monkeypatch, capsys, tmp_path, *args, "--memory", "database=128M")
    assert line.startswith("Error: --memory database=128M: a managed PostgreSQL with shared_buffers=128MB")


def test_serve_names_the_role_it_cannot_place(monkeypatch, capsys, tmp_path) -> None:
    line = refused_here(
        monkeypatch, capsys, tmp_path, "serve", "--db", SHARED_PG, "--cpus", f"database={CPUS[0]}"
    )
    assert line.startswith("Error: --cpus database: serve starts no database server")
    line = refused_here(monkeypatch, capsys, tmp_path, "serve", "--memory", "generator=256M")
    assert line.startswith("Error: --memory generator: serve sends no load")


def test_a_role_a_command_does_not_run_is_named(monkeypatch, capsys, tmp_path) -> None:
    line = refused_here(
        monkeypatch,
        capsys,
        tmp_path,
        "run",
        "--db",
        "managed:postgresql",
        "--target",
        "direct",
        "--cpus",
        "service=0",
    )
    assert line == "Error: --cpus service: direct mode runs no service; give the generator its place"
    line = refused_here(monkeypatch, capsys, tmp_path, "bench", "--native", "--memory", "generator=256M")
    assert line.startswith("Error: --memory generator: bench --native gives the native client its CPUs only")
    line = refused_here(monkeypatch, capsys, tmp_path, "bench", "--cpus", "generator=0")
    assert line == "Error: --cpus goes with --native only (the raw rounds run in this process)"


@pytest.mark.parametrize("command", COMMANDS)
def test_memory_without_permission_is_one_line_on_every_command(tmp_path, command) -> None:
    # As an unprivileged user no cgroup can be made: the entry point, in a fork that has given up
    # root, says so in one line and exits 2 before anything starts.
    if os.geteuid() != 0:
        pytest.skip("needs root to run the command as another user")
    args, role = COMMANDS[command]
    # Not under tmp_path, which is closed to other users (0700).
    folder = Path(tempfile.mkdtemp(prefix="dbladder-test-nobody-"))
    folder.chmod(0o777)

    def entry_point() -> str:
        import contextlib
        import io
        import sys

        from dbladder.cli import main

        os.chdir(folder)
        os.environ["DBLADDER_SERVERS_DIR"] = str(folder / "servers")
        sys.argv = ["dbladder", *args, "--memory", f"{role}=512M"]
        err = io.StringIO()
        code = 0
        with contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exited:
                code = int(exited.code or 0)
        return f"{code} {err.getvalue()}"

    try:
        said = as_nobody(entry_point)
        assert said.startswith("2 Error: --memory: user 65534 may not make cgroups in "), said
        assert said.count("\n") == 1, said
        assert list(folder.iterdir()) == []
    finally:
        shutil.rmtree(folder)


def test_drop_caches_is_refused_to_others_than_root(monkeypatch, capsys, tmp_path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may drop the page cache")
    line = refused_here(monkeypatch, capsys, tmp_path, "bench", "--native", "--drop-caches")
    assert "--drop-caches: only root" in line


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


@pytest.mark.slow
def test_serve_runs_on_the_services_cpus_in_its_cgroup(tmp_path) -> None:
    from cli_support import COMMAND
    from service_support import seed

    url = f"sqlite:///{tmp_path}/shop.db"
    seed(url)
    cap = ["--memory", "service=256M"] if memory_problem() is None else []
    process = subprocess.Popen(
        [
            *COMMAND,
            "serve",
            "--db",
            url,
            "--port",
            "0",
            "--workers",
            "2",
            "--cpus",
            f"service={CPUS[0]}",
            *cap,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert "http://" in process.stdout.readline()
        root = psutil.Process(process.pid)
        deadline = time.monotonic() + 20
        while len(family := [root, *root.children(recursive=True)]) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)  # the workers start after the service says where it listens
        assert len(family) >= 3
        time.sleep(1)
        for member in family:
            assert os.sched_getaffinity(member.pid) == {CPUS[0]}
        groups = [p for p in Path(f"/proc/{process.pid}/cgroup").read_text().splitlines() if ":memory:" in p]
        if cap:
            assert "/dbladder-" in groups[0]
            folder = memory_hierarchy().parent / groups[0].rsplit("/", 1)[1]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        for stream in (process.stdout, process.stderr):
            assert stream is not None
            stream.close()
    if cap:
        assert not folder.exists()
