"""`dbladder serve` through the entry point: its output, its answers, its exit codes."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest
from service_support import Client, seed

from dbladder.service.config import ServiceConfig
from dbladder.service.server import session_members, with_free_port

COMMAND = [sys.executable, "-c", "from dbladder.cli import main; main()"]


def free_port() -> int:
    return with_free_port(ServiceConfig("sqlite:///x.db", port=0)).port


def wait_until_listening(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"dbladder serve did not listen on {port}")


@pytest.mark.slow
def test_serve_prints_where_it_listens_answers_and_stops_on_sigint(tmp_path):
    url = f"sqlite:///{tmp_path}/shop.db"
    seed(url)
    port = free_port()
    process = subprocess.Popen(
        [*COMMAND, "serve", "--db", url, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until_listening(port, process)
        client = Client(port)
        assert client.get("/healthz") == (200, {"status": "ok"})
        assert client.get("/products/2")[0] == 200
        assert client.get("/products?category=cat-01")[0] == 200
        assert client.get("/orders/2")[0] == 200
        status, created = client.post("/orders", {"customer_id": 1, "items": [{"product_id": 1, "qty": 1}]})
        assert status == 201
        assert client.get(f"/orders/{created['id']}")[0] == 200
        assert client.post("/orders", {"customer_id": 1, "items": []})[0] == 400
        client.close()
    finally:
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    lines = stdout.splitlines()
    assert lines[0] == f"listening on http://127.0.0.1:{port} (1 worker(s), pool 100 in all, 100 per worker)"
    assert lines[1].split()[:2] == ["engine", "sqlite"]
    assert "journal_mode  WAL" in stdout
    assert session_members(process.pid) == []


def test_serve_reports_a_bad_configuration_with_exit_code_2():
    result = subprocess.run(
        [
            *COMMAND,
            "serve",
            "--db",
            "postgresql://postgres@127.0.0.1/x",
            "--sqlite-writers",
            "1",
            "--workers",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == (
        "Error: invalid configuration:\n"
        "  - --workers must be from 1 to 64, not 0\n"
        "  - --sqlite-writers 1 applies to SQLite only, not to postgresql\n"
    )


@pytest.mark.slow
def test_serve_refuses_an_unseeded_database_and_a_taken_port(tmp_path):
    url = f"sqlite:///{tmp_path}/empty.db"
    result = subprocess.run([*COMMAND, "serve", "--db", url], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert (
        result.stderr == f"Error: {url} has no products table; create the shop workload's data with "
        f"`dbladder seed --workload shop --db {url}`\n"
    )

    seeded = f"sqlite:///{tmp_path}/shop.db"
    seed(seeded)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*COMMAND, "serve", "--db", seeded, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"Error: cannot listen on http://127.0.0.1:{port}: Address already in use"
    )
