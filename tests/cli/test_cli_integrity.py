"""`dbladder run` checks what the database kept: a known answer through the command line (exit 4),
and a password that reaches the server without ever showing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

import apsw
import pytest
from cli_support import COMMAND
from cli_support import dbladder as run_dbladder
from database_support import MARIADB_URL
from managed_support import require_programs

from dbladder.servers.registry import ROOT_ENV
from dbladder.urls import parse_url

RUN = ["--steps", "2", "--start", "40", "--step", "0", "--hold", "3", "--warmup", "0", "--writes", "0.5"]
LENIENT = ["--p95", "10000", "--max-fail", "100", "--continue-after-fail", "--workers", "1", "--pool", "8"]


dbladder = partial(run_dbladder, timeout=180)


@pytest.mark.slow
def test_an_order_lost_and_one_changed_behind_dbladders_back_exit_4(tmp_path):
    """Triggers in the database change order 1003's total inside its own transaction, after the
    service computed its answer, and delete order 1005 (and its items) when order 1010 is written:
    the check must find exactly those two. (Deleting the newest order instead would let SQLite give
    its id to the next order, and the trigger would delete that one too.)
    synchronous=OFF and a kill -9 of the SQLite writer meanwhile lose nothing else: a commit
    SQLite has handed to the kernel survives the death of the process that wrote it."""
    path = tmp_path / "shop.db"
    url = f"sqlite:///{path}?synchronous=OFF"
    seeded = dbladder("seed", "--db", url, "--size", "products=500", "--size", "orders=1000")
    assert seeded.returncode == 0, seeded.stderr
    connection = apsw.Connection(str(path))
    connection.execute(
        "CREATE TRIGGER change_1003 AFTER INSERT ON orders WHEN NEW.id = 1003 BEGIN "
        "UPDATE orders SET total_cents = total_cents + 1 WHERE id = NEW.id; END"
    )
    connection.execute(
        "CREATE TRIGGER lose_1005 AFTER INSERT ON orders WHEN NEW.id = 1010 BEGIN "
        "DELETE FROM order_items WHERE order_id = 1005; DELETE FROM orders WHERE id = 1005; END"
    )
    connection.close()
    out = tmp_path / "out"
    ran = dbladder(
        "run", "--db", url, "--no-seed", *RUN, *LENIENT, "--sqlite-writers", "1",
        "--fault", "kill-writer@2:1", "--out", str(out),
    )  # fmt: skip
    assert ran.returncode == 4, ran.stdout + ran.stderr
    integrity = json.loads((out / "result.json").read_text())["integrity"]
    assert (integrity["lost"], integrity["lost_ids"]) == (1, [1005])
    assert (integrity["corrupted"], integrity["corrupted_ids"]) == (1, [1003])
    # 1003's total no longer adds up; the stock 1005 took of its two products is accounted for by no item.
    broken = {"order_totals": 1, "orders_without_items": 0, "orphan_items": 0, "stock": 2}
    assert integrity["invariants"] == broken
    assert integrity["present"] == integrity["acknowledged"] - 1
    assert "synchronous=OFF" in integrity["durability"] and "kernel" in integrity["durability"]
    summary = next(line for line in ran.stdout.splitlines() if line.startswith("integrity: "))
    assert ", 1 lost, 1 corrupted, 2 invariant violation(s)" in summary
    assert ran.stderr.splitlines()[-1].startswith("Error: integrity: ")
    assert "| 1 | 1 | 2 |" in (out / "report.md").read_text()  # lost, corrupted, violations


def process_list() -> str:
    """Every process's command line, as `ps` shows them."""
    return subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
def test_a_password_from_the_environment_is_in_no_file_process_list_or_output(mariadb_user, tmp_path):
    user, password, database = mariadb_user
    admin = parse_url(MARIADB_URL)
    url = f"mariadb://{user}@{admin.host or '127.0.0.1'}:{admin.port or 3306}/{database}"
    env = {**os.environ, "MYSQL_PWD": password, "HOME": str(tmp_path)}  # no ~/.my.cnf
    seen_in_ps = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if password in process_list():
                seen_in_ps.append(True)
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    out = tmp_path / "out"
    try:
        ran = dbladder(
            "run", "--db", url, "--size", "products=500", "--size", "orders=1000", *RUN, *LENIENT,
            "--steps", "1", "--out", str(out), env=env,
        )  # fmt: skip
        # The URL with its password from DBLADDER_DB_URL, no --db at all: the same.
        in_url = url.replace(user, f"{user}:{password}")
        described = dbladder("engines", env={**env, "MYSQL_PWD": "", "DBLADDER_DB_URL": in_url})
    finally:
        done.set()
        watcher.join()
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert described.returncode == 0, described.stderr
    result = json.loads((out / "result.json").read_text())
    assert result["integrity"]["lost"] == 0 and result["integrity"]["acknowledged"] > 0
    assert f"{user}:***@" in described.stdout
    files = [path for path in Path(out).rglob("*") if path.is_file()]
    assert {path.name for path in files} >= {"result.json", "report.md", "report.html", "levels.csv"}
    for path in files:
        assert password not in path.read_text(errors="replace"), path
    for text in (ran.stdout, ran.stderr, described.stdout, described.stderr):
        assert password not in text
    assert not seen_in_ps, "the password showed in the process list"


@pytest.mark.slow
def test_sigterm_stops_a_run_on_a_managed_server_and_leaves_nothing_behind(tmp_path):
    require_programs("mariadb")
    # A registry of its own, not under tmp_path: that is closed to the mysql user the server runs as.
    registry = Path(tempfile.mkdtemp(prefix="dbladder-test-servers-"))
    registry.chmod(0o755)
    out = tmp_path / "out"
    env = {**os.environ, ROOT_ENV: str(registry)}
    command = [*COMMAND, "run", "--db", "managed:mariadb"]
    command += [
        "--size",
        "products=500",
        "--size",
        "orders=1000",
        *RUN,
        *LENIENT,
        "--steps",
        "4",
        "--out",
        str(out),
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        result = out / "result.json"
        while time.monotonic() < deadline and process.poll() is None:
            if result.exists() and json.loads(result.read_text()).get("levels"):
                break  # the first level is in: the load is under way
            time.sleep(0.2)
        assert [entry.name.split("-")[0] for entry in registry.iterdir()] == ["mariadb"]
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
        leftovers = list(registry.iterdir())
        shutil.rmtree(registry, ignore_errors=True)
    assert process.returncode == 0, stderr
    assert json.loads(result.read_text())["status"] == "interrupted"
    assert leftovers == []
