"""Headless Chromium for the tests of the pages dbladder shows: the report and the live dashboard."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

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


class Page:
    """One page open in headless Chromium, driven over the DevTools protocol on a pipe
    (--remote-debugging-pipe: JSON messages ended by a NUL byte, commands on the browser's fd 3,
    answers and events on its fd 4), so a test can read the same live page at two moments.
    `errors` collects every exception the page's script threw and every console error."""

    def __init__(self, url: str, profile: Path, timeout: float = 60):
        """Open `url`; `timeout`: seconds the browser has to answer any one command."""
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        # The browser's ends moved above 100: one of them may be fd 3 or 4 here, which the
        # redirections below would close on the browser.
        commands_read, answers_write = (_high(fd) for fd in (commands_read, answers_write))
        flags = " ".join(CHROMIUM_FLAGS)
        # bash (dash takes single-digit fds only) gives the browser the pipes as the fds 3 and 4
        # its protocol reads and writes.
        script = (
            f'exec "$0" {flags} --remote-debugging-pipe --user-data-dir="$1" about:blank '
            f"3<&{commands_read} 4>&{answers_write} {commands_read}<&- {answers_write}>&-"
        )
        self._process = subprocess.Popen(
            ["bash", "-c", script, chromium("the dashboard was not rendered"), str(profile)],
            pass_fds=(commands_read, answers_write),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next_id = 0
        self._timeout = timeout
        self._deadline = time.monotonic() + timeout
        self.errors: list[str] = []
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self._call("Runtime.enable", session=True)
        self._call("Page.navigate", {"url": url}, session=True)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able)."""
        found = self._call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True
        )
        if "exceptionDetails" in found:
            raise AssertionError(f"{expression!r} threw: {found['exceptionDetails']}")
        return found["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """Evaluate `expression` until it is truthy (within `timeout` seconds); its value."""
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"{expression!r} still false after {timeout} s")

    def close(self) -> None:
        with contextlib.suppress(OSError, AssertionError):
            self._send({"id": 0, "method": "Browser.close"})
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=10)
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        os.close(self._answers)

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._commands, json.dumps(message).encode() + b"\0")

    def _call(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> dict:
        self._next_id += 1
        self._deadline = time.monotonic() + self._timeout
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        self._send(message)
        while True:
            answer = self._receive()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise AssertionError(f"{method}: {answer['error']}")
                return answer["result"]
            self._note(answer)

    def _note(self, event: dict[str, Any]) -> None:
        params = event.get("params", {})
        if event.get("method") == "Runtime.exceptionThrown":
            self.errors.append(str(params.get("exceptionDetails")))
        elif event.get("method") == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(str(params.get("args")))

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = self._deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise AssertionError("Chromium did not answer in time")
            chunk = os.read(self._answers, 65536)
            if not chunk:
                raise AssertionError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)


def _high(fd: int) -> int:
    """The same pipe end as a file descriptor of 100 or above (the original is closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 100)
    os.close(fd)
    return moved
