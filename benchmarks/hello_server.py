"""A granian hello-world server (benchmarks/hello_app.py) on a free loopback port, for the
generator benchmarks: the trivial target that both wrk and dbladder's generator load."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

HOST = "127.0.0.1"
HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def start_server(port: int, cpu: int | None, backlog: int | None = None) -> subprocess.Popen[bytes]:
    """granian with one RSGI worker, pinned to `cpu` when given; returns once it accepts connections."""
    granian = Path(sys.executable).with_name("granian")
    command = [str(granian), "--interface", "rsgi", "--workers", "1", "--host", HOST, "--port", str(port)]
    if backlog is not None:
        command += ["--backlog", str(backlog)]
    command += ["--working-dir", str(HERE), "--log-level", "warning", "hello_app:app"]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu), *command]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=0.2):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit(f"granian did not start listening on {HOST}:{port} within 15 s")


def stop_server(server: subprocess.Popen[bytes]) -> None:
    """End the server started above (by its PID), killing it if it does not stop within 5 s."""
    server.terminate()
    try:
        server.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=5)
