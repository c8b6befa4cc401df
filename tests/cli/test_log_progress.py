"""`dbladder run ... 2>log`: with standard error not a terminal, a progress line every
--progress-interval seconds while a level runs (pgbench -P), read from the log as it grows."""

from __future__ import annotations

import subprocess
import time

import pytest
from cli_support import COMMAND
from known_servers import known_server

from dbladder.cli.log_progress import progress_line
from dbladder.load.live_view import LiveView


def test_a_progress_line_says_the_level_its_time_the_rates_p95_and_failures():
    view = LiveView(1, 400, 12.04, False, 399.81, 399.5, 3.14, 2)
    assert progress_line(view) == (
        "progress: level 2 at 400 req/s, 12.0 s: sent 399.8 req/s, answered 399.5 req/s, "
        "p95 3.1 ms, failures 2"
    )


@pytest.mark.slow
def test_run_with_standard_error_to_a_file_writes_progress_lines_while_a_level_runs(tmp_path):
    log = tmp_path / "log"
    args = [
        "run", "--db", f"sqlite:///{tmp_path}/x.db", "--size", "products=2000", "--size", "orders=5000",
        "--preset", "quick", "--steps", "1", "--start", "100", "--step", "0", "--hold", "6", "--warmup", "0",
        "--progress-interval", "1", "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    with known_server("fifo", service_ms=1.0) as server, log.open("w") as stderr:
        process = subprocess.Popen(
            [*COMMAND, *args, "--service", server.url], stderr=stderr, stdout=subprocess.DEVNULL
        )
        try:
            seen = ""
            deadline = time.monotonic() + 60
            while "progress: level 1" not in seen and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
                seen = log.read_text()
            assert "progress: level 1 at 100 req/s" in seen, seen
            assert process.poll() is None  # seen while the level was still running
        finally:
            assert process.wait(timeout=60) == 0
    lines = [line for line in log.read_text().splitlines() if line.startswith("progress: level 1")]
    assert len(lines) >= 3, lines
    assert "\x1b" not in log.read_text()  # no control codes in a log
