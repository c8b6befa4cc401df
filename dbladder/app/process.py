"""The user's app as a process group dbladder owns: started, waited for, logged, stopped.

The command runs through `/bin/sh -c` in `--app-dir`, in a session (and process group) of its
own, so that whatever it starts (gunicorn's workers, node's children, a shell's subshells) can be
found and stopped together: on a normal exit, on an error, and on Ctrl-C, which reaches only
dbladder (the app's group is not the terminal's) and unwinds through `running_app`'s `finally`.

The app's output goes through a pipe to a thread that writes it to `app.log` with every password
of its environment replaced by `***`, so the password never reaches the disk.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidConfig
from ..service.server import session_members, stop_process_tree
from .errors import AppExited, AppNeverReady

PORT_FIELD = "{port}"
TAIL_LINES = 5
REDACTED = "***"


@dataclass(frozen=True)
class AppCommand:
    """How to start the user's app, checked all at once (`problems`)."""

    command: str
    directory: Path = Path(".")
    ready_path: str = "/"
    ready_timeout: float = 60.0
    setup: str | None = None
    stop_timeout: float = 10.0
    host: str = "127.0.0.1"

    def problems(self) -> list[str]:
        """Every problem of this configuration, each naming its option."""
        found = []
        if not self.command.strip():
            found.append("--app: the command is empty")
        if not self.directory.is_dir():
            found.append(f"--app-dir: {self.directory} is not a folder")
        if not self.ready_path.startswith("/"):
            found.append(f"--app-ready: {self.ready_path!r} must be a path starting with /")
        if not self.ready_timeout > 0:
            found.append(f"--app-ready-timeout: must be above 0 seconds, not {self.ready_timeout}")
        if self.setup is not None and not self.setup.strip():
            found.append("--app-setup: the command is empty")
        return found

    def describe(self) -> dict[str, Any]:
        """The app's settings for the result (its commands as given: they hold no password)."""
        return {
            "command": self.command,
            "directory": str(self.directory.resolve()),
            "ready_path": self.ready_path,
            "ready_timeout": self.ready_timeout,
            "setup": self.setup,
        }

    def checked(self) -> AppCommand:
        """This configuration, or InvalidConfig listing every problem."""
        if found := self.problems():
            raise InvalidConfig(found)
        return self

    def command_for(self, port: int) -> str:
        """The shell command with dbladder's port in place of `{port}`."""
        return self.command.replace(PORT_FIELD, str(port))


class RedactingLog:
    """A thread copying a process's output, line by line, to a log file with secrets replaced."""

    def __init__(self, source: IO[bytes], log_path: Path, secrets: tuple[str, ...]):
        self._source = source
        self._log_path = log_path
        self._secrets = tuple(secret.encode() for secret in secrets if secret)
        self._thread = threading.Thread(target=self._copy, name="app-log", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        with open(self._log_path, "ab") as log_file:
            for line in iter(self._source.readline, b""):
                for secret in self._secrets:
                    line = line.replace(secret, REDACTED.encode())
                log_file.write(line)
                log_file.flush()
        self._source.close()

    def join(self, timeout: float = 5.0) -> None:
        """Wait until everything the process printed is in the log (its pipe closed)."""
        self._thread.join(timeout)


def free_port(host: str) -> int:
    """A TCP port nothing listens on now, for `{port}`."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def launch(
    command: str, directory: Path, environment: Mapping[str, str], log_path: Path, secrets: tuple[str, ...]
) -> tuple[subprocess.Popen[bytes], RedactingLog]:
    """`/bin/sh -c command` in a session of its own, its output redacted into `log_path`."""
    process = subprocess.Popen(
        ["/bin/sh", "-c", command],
        cwd=directory,
        env={**os.environ, **environment},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None  # stdout=PIPE gives one
    return process, RedactingLog(process.stdout, log_path, secrets)


def tail(log_path: Path, lines: int = TAIL_LINES) -> str:
    """The last lines of a log, joined with ' | ' so they fit one message line."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return "(no output)"
    last = [line.strip() for line in text.strip().splitlines()[-lines:] if line.strip()]
    return " | ".join(last) if last else "(no output)"


@dataclass
class RunningApp:
    """The app started by `running_app`: where it listens, how to stop, kill and start it again.

    It answers the calls the run's faults make on a service (`pid`, `kill`, `begin_stop`, `stop`,
    `start_again`, `starts`, `url`), so kill-service and restart-service act on its group.
    """

    config: AppCommand
    port: int
    environment: dict[str, str] = field(repr=False)
    log_path: Path
    secrets: tuple[str, ...] = field(default=(), repr=False)
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    starts: int = 0
    stopping: bool = field(default=False, repr=False)
    _log: RedactingLog | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    @property
    def command(self) -> str:
        return self.config.command_for(self.port)

    @property
    def pid(self) -> int:
        """The shell's process: its session id and process group are the app's whole tree."""
        assert self.process is not None, "the app was not started"
        return self.process.pid

    def members(self) -> list[int]:
        """Every live process the app's command started (its session)."""
        return session_members(self.pid) if self.process is not None else []

    def exit_code(self, wait: float = 0.0) -> int | None:
        """The command's exit code once it has exited (negative: killed by that signal), else None;
        waiting up to `wait` seconds for it to exit."""
        if self.process is None:
            return None
        try:
            return self.process.wait(timeout=wait) if wait > 0 else self.process.poll()
        except subprocess.TimeoutExpired:
            return None

    def start(self) -> float:
        """Start the command and wait until its ready path answers below 500; the seconds it took."""
        began = time.monotonic()
        self.process, self._log = launch(
            self.command, self.config.directory, self.environment, self.log_path, self.secrets
        )
        self.starts += 1
        self.stopping = False
        self._wait_until_ready(began + self.config.ready_timeout, began)
        return time.monotonic() - began

    def start_again(self, startup_timeout: float | None = None) -> float:
        """Start the command again on the same port, after `kill()` or `stop()`."""
        if self.exit_code() is None and self.process is not None:
            raise AppExited(f"the app on {self.url} is still running; stop or kill it first")
        return self.start()

    def ready_status(self, timeout: float = 1.0) -> int | None:
        """The status the ready path answers now, or None when nothing answers."""
        connection = http.client.HTTPConnection(self.config.host, self.port, timeout=timeout)
        try:
            connection.request("GET", self.config.ready_path)
            return connection.getresponse().status
        except (OSError, http.client.HTTPException):
            return None
        finally:
            connection.close()

    def _wait_until_ready(self, deadline: float, began: float) -> None:
        while True:
            code = self.exit_code()
            if code is not None:
                self._finish_log()
                raise AppExited(
                    f"the app exited with code {code} before it answered {self.config.ready_path} "
                    f"(command: {self.command}); its last lines: {tail(self.log_path)}"
                )
            status = self.ready_status()
            if status is not None and status < 500:
                return
            if time.monotonic() > deadline:
                waited = time.monotonic() - began
                answered = f"it last answered {status}" if status is not None else "nothing answered"
                self.stop()
                raise AppNeverReady(
                    f"the app did not answer {self.config.ready_path} below 500 within {waited:.1f} s "
                    f"({answered}; command: {self.command}); its last lines: {tail(self.log_path)}"
                )
            time.sleep(0.1)

    def begin_stop(self) -> None:
        """SIGTERM to the whole group, as a process manager would send."""
        if self.exit_code() is None and self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGTERM)
            self.stopping = True

    def stop(self, timeout: float | None = None) -> int | None:
        """Stop the app and every process of it: SIGTERM to the group, then SIGKILL what is left."""
        if self.process is None:
            return None
        self.begin_stop()
        # `stopping` stays set until the next start: the app is down on purpose (AppWatch).
        stop_process_tree(self.process, self.config.stop_timeout if timeout is None else timeout, True)
        self._finish_log()
        return self.process.returncode

    def kill(self) -> int:
        """SIGKILL every process of the app at once, as a crash would; how many were killed."""
        self.stopping = True  # down on purpose: a fault, not the app exiting by itself
        members = self.members()
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait()
        deadline = time.monotonic() + 5.0
        while self.members() and time.monotonic() < deadline:
            time.sleep(0.01)
        self._finish_log()
        return len(members)

    def _finish_log(self) -> None:
        if self._log is not None:
            self._log.join()

    def log(self) -> str:
        """Everything the app printed so far, redacted."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@contextlib.contextmanager
def running_app(config: AppCommand, environment: Mapping[str, str], log_path: Path) -> Iterator[RunningApp]:
    """The app running for the block, on a port dbladder chose, ready; stopped on any exit.

    `environment` is the run's (`app_environment`): its passwords are kept out of `log_path`.
    AppNeverReady or AppExited, with the command and its last lines, when it does not come up;
    nothing of it is left running either way.
    """
    from .environment import secrets

    config = config.checked()
    port = free_port(config.host)
    environment = {**environment, "PORT": str(port)}
    app = RunningApp(config, port, environment, log_path, secrets(environment))
    try:
        app.start()
        yield app
    finally:
        app.stop()
