"""Starting a server process that outlives us, recognising it later, signalling it and waiting for it.

A managed server must keep running after `dbladder db start` exits, and must be the same kind of
process whoever started it, so it is never our child. A small launcher starts a keeper process in
a session of its own, which starts the server in another session of its own and prints the
server's PID. The keeper stays only to reap: it is the server's parent and a child subreaper, so
the server and any orphaned children of it are reaped the moment they die. Init would do it too,
but not necessarily at once (every ~2 s on this machine), and PostgreSQL refuses to start while
the PID in its `postmaster.pid` still exists, even as a zombie. The keeper writes how the server
ended into its log, and exits after it.

Before any signal, `is_ours` checks that the PID's command line is the server program started on
this instance's folder: a PID written in a record can be reused by an unrelated process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil

from .errors import ServerStartFailed
from .kind import OsUser

# argv: log path, uid and gid to run the server as (-1: as we are), the CPUs it may run on and
# the cgroup.procs file of its memory cgroup ("-": any, none), then the server's command line. It
# runs as this process's user and switches user only in the server's own process: the server's OS
# user may not be able to read this Python (a virtualenv under /root). The server joins its cgroup
# and takes its CPUs before it execs, so every backend it forks is born in its place.
LAUNCHER = """
import ctypes, os, signal, sys
log, uid, gid, cpus, procs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
command = sys.argv[6:]
if os.fork() != 0:
    os._exit(0)
os.setsid()
try:
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except Exception:
    pass
server = os.fork()
if server == 0:
    try:
        os.setsid()
        out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        if procs != "-":
            with open(procs, "w") as group:
                group.write(str(os.getpid()))
        if cpus != "-":
            os.sched_setaffinity(0, {int(cpu) for cpu in cpus.split(",")})
        if uid >= 0:
            os.fchown(out, uid, gid)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.execv(command[0], command)
    except BaseException as exc:
        os.write(2, ("dbladder could not start %s: %s\\n" % (command[0], exc)).encode())
    finally:
        os._exit(127)
print(server, flush=True)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
for name in ("SIGINT", "SIGTERM", "SIGHUP"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
ended = None
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if pid == server:
        ended = status
if ended is not None:
    if os.WIFSIGNALED(ended):
        how = "was killed by signal %d" % os.WTERMSIG(ended)
    else:
        how = "exited with code %d" % os.waitstatus_to_exitcode(ended)
    try:
        # No O_CREAT: the folder may be being removed.
        out = os.open(log, os.O_WRONLY | os.O_APPEND)
        os.write(out, ("dbladder: %s (PID %d) %s\\n" % (command[0], server, how)).encode())
    except OSError:
        pass
"""


def launch(
    command: list[str],
    log: Path,
    cwd: Path,
    user: OsUser | None,
    cpus: list[int] | None = None,
    procs: Path | None = None,
) -> int:
    """Start `command` detached, in its own session, output appended to `log`, on `cpus` (None:
    any) and in the cgroup whose cgroup.procs is `procs` (None: this process's); its PID."""
    place = [",".join(map(str, cpus)) if cpus else "-", str(procs) if procs is not None else "-"]
    done = subprocess.run(
        [sys.executable, "-I", "-c", LAUNCHER, str(log), *_ids(user), *place, *command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        raise ServerStartFailed(
            f"could not launch {command[0]}: {done.stderr.strip() or done.stdout.strip()}"
        )
    return int(done.stdout)


def _ids(user: OsUser | None) -> list[str]:
    return [str(user.uid), str(user.gid)] if user is not None else ["-1", "-1"]


def is_ours(pid: int | None, program: str, identity: str) -> bool:
    """Whether `pid` is a live `program` whose command line holds `identity` (the instance's folder)."""
    if pid is None:
        return False
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        command = process.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return bool(command) and os.path.basename(command[0]) == program and identity in command


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def signal_server(pid: int, sig: signal.Signals) -> None:
    """Send `sig` to the server process. The caller has checked `is_ours(pid)`."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def kill_family(pid: int) -> list[psutil.Process]:
    """SIGKILL the server and every process it started, as a crash would: nobody runs any more
    code. The server is frozen (SIGSTOP) first, so that it cannot start a process while its
    family is listed. (A process-group kill is not enough: every PostgreSQL child calls setsid.)
    The processes signalled; the caller has checked `is_ours(pid)`."""
    try:
        server = psutil.Process(pid)
        server.send_signal(signal.SIGSTOP)
        family = [server, *server.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []
    for process in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signal.SIGKILL)
    return family


def wait_gone(processes: list[psutil.Process], timeout: float) -> bool:
    """Wait until every one of `processes` has exited and been reaped (PostgreSQL will not start
    while the PID in its postmaster.pid exists, even as a zombie); False if some are still there
    after `timeout` seconds."""
    _, still_there = psutil.wait_procs(processes, timeout=timeout)
    return not still_there


def as_waitable(pid: int) -> list[psutil.Process]:
    """The process `pid` as a one-item list for `wait_gone`, or none if it has gone already."""
    try:
        return [psutil.Process(pid)]
    except psutil.NoSuchProcess:
        return []
