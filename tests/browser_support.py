"""Headless Chromium for the tests of the pages dbladder shows: the report and the live dashboard."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REQUIRE_SERVERS = os.environ.get("DBLADDER_REQUIRE_SERVERS") == "1"

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Headless, with nothing of its own on the network: the page's requests are the only ones."""


def chromium(what: str = "the page was not rendered") -> str:
    """The chromium program; skips saying `what` was not done (fails under CI) when it is missing."""
    path = shutil.which("chromium")
    if path is None:
        message = f"chromium is not installed (Debian: apt-get install chromium), so {what}"
        if REQUIRE_SERVERS:
            pytest.fail(message + "; DBLADDER_REQUIRE_SERVERS=1 makes this a failure", pytrace=False)
        pytest.skip(message)
    return path


def dump_dom(url: str, profile: Path, wait_ms: int = 3000) -> tuple[str, list[str]]:
    """The page's DOM after `wait_ms` of its scripts running, and the console messages it logged
    (errors and all). A wall-clock wait (--timeout), not a virtual-time budget: virtual time stands
    still while a request is open, and a page of server-sent events always has one."""
    done = subprocess.run(
        [
            chromium("the dashboard was not rendered"),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            f"--timeout={wait_ms}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if re.search(r"CONSOLE|Uncaught", line)]
    return done.stdout, console
