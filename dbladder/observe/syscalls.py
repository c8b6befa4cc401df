"""Counting system calls per process group for a few seconds (the bpftrace measurement of "Postgres vs SQLite
under load", repeatable).

"Postgres vs SQLite under load" counted the system calls of the app and of PostgreSQL over five seconds of
identical
read traffic (309,000 against SQLite's 188,000) to show what crossing a socket to another process
costs on a shared machine. `count_syscalls(groups, seconds)` does the same per group, with
bpftrace where it is installed (a kernel tracepoint: cheap, the traffic barely notices) or else
strace (`strace -c -f -p PID...`: it stops the traced process at every call, so the service slows
down, often several times, while it counts: the counts are right, the latency meanwhile is not;
`level_flags` marks such a level). Neither is installed by dbladder; `syscall_tool()` says which
one is used, and `syscalls_unavailable()` gives the message to print when neither is there.

The result (JSON-ready):

    tool       "bpftrace" or "strace"
    seconds    how long it counted
    groups     {name: {"pids": processes traced, "calls": system calls counted (None if none
               could be), "top": {syscall: calls} for the ten most frequent (strace only),
               "error": what went wrong, or None}}

`per_request(result, requests)` divides each group's calls by the requests served meanwhile.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

TOOLS = ("bpftrace", "strace")
"""In order of preference: bpftrace costs the traced processes far less."""
TOP_SYSCALLS = 10
_STOP_SECONDS = 10.0  # for a tracer to detach and print its counts after SIGINT


def syscall_tool() -> str | None:
    """The tool count_syscalls uses here (bpftrace preferred, then strace), or None."""
    return next((tool for tool in TOOLS if shutil.which(tool)), None)


def syscalls_unavailable() -> str | None:
    """The message to show for --syscalls when no tool can count here; None when one can."""
    if syscall_tool() is not None:
        return None
    return (
        "--syscalls needs bpftrace or strace, and neither is installed here "
        "(e.g. `apt-get install strace` or `apt-get install bpftrace`); system calls are not counted"
    )


def count_syscalls(
    groups: Mapping[str, Callable[[], list[int]]], seconds: float = 3.0
) -> dict[str, Any] | None:
    """System calls of each group's processes over `seconds`; None when neither tool is installed.

    Blocks for about `seconds` (plus the tracer's start and stop); call it from a thread to count
    while a level runs. Groups without processes (SQLite's database) are reported with 0 pids.
    """
    tool = syscall_tool()
    if tool is None:
        return None
    members = {name: sorted(set(resolve())) for name, resolve in groups.items()}
    if tool == "bpftrace":
        return _with_bpftrace(members, groups, seconds)
    return _with_strace(members, seconds)


def per_request(result: dict[str, Any], requests: int) -> dict[str, float | None]:
    """Each group's system calls per request, given the requests served while counting."""
    return {
        name: group["calls"] / requests if group["calls"] is not None and requests > 0 else None
        for name, group in result["groups"].items()
    }


# ---------------------------------------------------------------------------------------------
# strace


def _with_strace(members: dict[str, list[int]], seconds: float) -> dict[str, Any]:
    groups: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="dbladder-strace-") as folder:
        tracers: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
        for name, pids in members.items():
            if not pids:
                groups[name] = _group(0, None, error="no processes")
                continue
            output = Path(folder) / f"{name}.txt"
            # One strace per group: its -c summary adds up every process it traces. -f follows the
            # threads and the children; -qq keeps attach/detach chatter out of the summary file.
            command = ["strace", "-c", "-f", "-qq", "-o", str(output)]
            for pid in pids:
                command += ["-p", str(pid)]
            tracers[name] = (
                subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
                ),
                output,
            )
        time.sleep(seconds)
        for process, _ in tracers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for name, (process, output) in tracers.items():
            try:
                _, errors = process.communicate(timeout=_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                _, errors = process.communicate()
            counts = _parse_strace(output.read_text() if output.exists() else "")
            message = errors.decode(errors="replace").strip()
            if counts is None and not message:
                # strace prints no table when the processes made no call at all (idle, asleep).
                groups[name] = _group(len(members[name]), 0)
            elif counts is None:
                groups[name] = _group(len(members[name]), None, error=message)
            else:
                top = dict(sorted(counts.items(), key=lambda item: -item[1])[:TOP_SYSCALLS])
                groups[name] = _group(len(members[name]), sum(counts.values()), top, message or None)
    return {"tool": "strace", "seconds": seconds, "groups": groups}


_STRACE_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:(\d+)\s+)?(\S+)\s*$")


def _parse_strace(text: str) -> dict[str, int] | None:
    """{syscall: calls} from `strace -c` output; None when it holds no table."""
    counts: dict[str, int] = {}
    table = False
    for line in text.splitlines():
        if line.lstrip().startswith("% time"):
            table = True
            continue
        match = _STRACE_ROW.match(line)
        if table and match and match.group(3) != "total":
            counts[match.group(3)] = counts.get(match.group(3), 0) + int(match.group(1))
    return counts if table else None


# ---------------------------------------------------------------------------------------------
# bpftrace


def _with_bpftrace(
    members: dict[str, list[int]], groups: Mapping[str, Callable[[], list[int]]], seconds: float
) -> dict[str, Any]:
    # Count every process's calls by process id and sort them into groups afterwards, by the
    # groups as they were before and after: a filter in the probe would miss a process (a
    # PostgreSQL backend) born while counting.
    milliseconds = max(1, round(seconds * 1000))
    program = "tracepoint:raw_syscalls:sys_enter { @[pid] = count(); } " + (
        f"interval:ms:{milliseconds} {{ exit(); }}"
    )
    failure = None
    try:
        finished = subprocess.run(
            ["bpftrace", "-e", program], capture_output=True, text=True, timeout=seconds + 30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = f"bpftrace failed: {exc}"
    else:
        if finished.returncode:
            failure = finished.stderr.strip() or f"bpftrace exited with code {finished.returncode}"
    by_pid = {} if failure else _parse_bpftrace(finished.stdout)
    result = {}
    for name, pids in members.items():
        family = set(pids) | set(_resolve_quietly(groups[name]))
        if not family:
            result[name] = _group(0, None, error="no processes")
        elif failure is not None or not by_pid:
            result[name] = _group(len(family), None, error=failure or "bpftrace printed no counts")
        else:
            result[name] = _group(len(family), sum(by_pid.get(pid, 0) for pid in family))
    return {"tool": "bpftrace", "seconds": milliseconds / 1000, "groups": result}


def _parse_bpftrace(text: str) -> dict[int, int]:
    """{pid: calls} from the map bpftrace prints at exit ("@[1234]: 5678" lines)."""
    return {int(pid): int(calls) for pid, calls in re.findall(r"@\[(\d+)\]:\s*(\d+)", text)}


def _resolve_quietly(resolve: Callable[[], list[int]]) -> list[int]:
    try:
        return resolve()
    except Exception:  # the group as it was before counting still stands
        return []


def _group(
    pids: int, calls: int | None, top: dict[str, int] | None = None, error: str | None = None
) -> dict[str, Any]:
    return {"pids": pids, "calls": calls, "top": top or {}, "error": error}
