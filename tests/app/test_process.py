"""The app's process group: started on dbladder's port, ready, logged redacted, stopped whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dbladder.app import AppCommand, AppExited, AppNeverReady, AppSetupFailed, run_setup, running_app
from dbladder.errors import InvalidConfig
from dbladder.service.server import session_members

# A small app: answers its ready path after a delay, prints its environment's password, and
# starts a child of its own (as gunicorn starts workers) so stopping must reach the whole group.
APP = textwrap.dedent(
    """
    import http.server, os, subprocess, sys, time
    port = int(sys.argv[1])
    print("starting with", os.environ.get("PGPASSWORD"), "on", port, flush=True)
    print("DATABASE_URL", os.environ.get("DATABASE_URL"), flush=True)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    print("child", child.pid, flush=True)
    time.sleep(float(os.environ.get("APP_DELAY", "0")))
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            status = int(os.environ.get("APP_STATUS", "200"))
            self.send_response(status); self.end_headers(); self.wfile.write(b"ok")
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """
)

ENVIRONMENT = {
    "DATABASE_URL": "postgres://bench@127.0.0.1:5432/shop",
    "PGPASSWORD": "hunter2-secret",
    "DBLADDER_DB_PASSWORD": "hunter2-secret",
}


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def command(app_dir: Path, **config: object) -> AppCommand:
    return AppCommand(f"{sys.executable} app.py {{port}}", app_dir, **config)  # type: ignore[arg-type]


def child_pid(log: str) -> int:
    return int(next(line.split()[1] for line in log.splitlines() if line.startswith("child ")))


def alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def test_the_app_starts_on_its_port_answers_and_leaves_nothing(app_dir, tmp_path):
    log = tmp_path / "app.log"
    with running_app(command(app_dir), ENVIRONMENT, log) as app:
        assert app.ready_status() == 200
        assert f"on {app.port}" in app.log()
        members = app.members()
        assert len(members) >= 2  # the shell's python and its child
        child = child_pid(app.log())
        assert child in members
    assert not alive(child)
    assert not session_members(app.pid)
    text = log.read_text()
    assert "hunter2-secret" not in text
    assert "starting with *** on" in text


def test_an_app_that_never_answers_is_one_line_and_leaves_nothing(app_dir, tmp_path):
    log = tmp_path / "app.log"
    config = command(app_dir, ready_timeout=1.0)
    began = time.monotonic()
    environment = {**ENVIRONMENT, "APP_DELAY": "600"}
    with pytest.raises(AppNeverReady) as caught, running_app(config, environment, log):
        pass
    assert time.monotonic() - began < 5.0
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("the app did not answer / below 500 within 1.")
    assert f"nothing answered; command: {sys.executable} app.py " in message
    assert "its last lines: starting with *** on" in message
    assert "hunter2" not in message
    assert not alive(child_pid(log.read_text()))


def test_an_app_answering_500_is_not_ready(app_dir, tmp_path):
    config = command(app_dir, ready_timeout=1.0)
    environment = {**ENVIRONMENT, "APP_STATUS": "503"}
    with (
        pytest.raises(AppNeverReady, match="it last answered 503"),
        running_app(config, environment, tmp_path / "a.log"),
    ):
        pass


def test_an_app_that_exits_before_it_is_ready_says_its_code(app_dir, tmp_path):
    config = AppCommand("echo cannot bind; exit 3", app_dir)
    with pytest.raises(AppExited) as caught, running_app(config, ENVIRONMENT, tmp_path / "a.log"):
        pass
    assert str(caught.value) == (
        "the app exited with code 3 before it answered / (command: echo cannot bind; exit 3); "
        "its last lines: cannot bind"
    )


def test_kill_and_start_again_act_on_the_whole_group(app_dir, tmp_path):
    with running_app(command(app_dir), ENVIRONMENT, tmp_path / "a.log") as app:
        first = child_pid(app.log())
        assert app.kill() >= 2
        assert not alive(first)
        assert app.ready_status() is None
        app.start_again()
        assert app.starts == 2
        assert app.ready_status() == 200


def test_ctrl_c_stops_the_app(app_dir, tmp_path):
    """dbladder interrupted (SIGINT, as Ctrl-C sends) inside the block stops the app's group."""
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from dbladder.app import AppCommand, running_app
        config = AppCommand({sys.executable!r} + " app.py {{port}}", Path({str(app_dir)!r}))
        with running_app(config, {{}}, Path({str(tmp_path / "c.log")!r})) as app:
            print("ready", app.pid, flush=True)
            time.sleep(600)
        """
    )
    runner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert runner.stdout is not None
    line = runner.stdout.readline()
    assert line.startswith("ready"), line
    app_pid = int(line.split()[1])
    child = child_pid((tmp_path / "c.log").read_text())
    runner.send_signal(signal.SIGINT)
    runner.wait(20)
    runner.stdout.close()
    assert not session_members(app_pid)
    assert not alive(child)


def test_the_configuration_reports_every_problem_at_once(tmp_path):
    config = AppCommand(" ", tmp_path / "missing", ready_path="healthz", ready_timeout=0, setup="")
    with pytest.raises(InvalidConfig) as caught:
        config.checked()
    assert caught.value.problems == [
        "--app: the command is empty",
        f"--app-dir: {tmp_path / 'missing'} is not a folder",
        "--app-ready: 'healthz' must be a path starting with /",
        "--app-ready-timeout: must be above 0 seconds, not 0",
        "--app-setup: the command is empty",
    ]


def test_setup_runs_to_its_end_with_the_environment(tmp_path):
    log = tmp_path / "app.log"
    run_setup('echo "migrating $DATABASE_URL with $PGPASSWORD"', tmp_path, ENVIRONMENT, log)
    assert log.read_text() == "migrating postgres://bench@127.0.0.1:5432/shop with ***\n"


def test_a_failing_setup_says_its_code_and_last_lines(tmp_path):
    with pytest.raises(AppSetupFailed) as caught:
        run_setup("echo one; echo two; exit 7", tmp_path, ENVIRONMENT)
    assert str(caught.value) == (
        "the app's setup exited with code 7 (command: echo one; echo two; exit 7); "
        "its last lines: one | two; nothing was loaded"
    )
    assert os.getpid()  # dbladder itself goes on
