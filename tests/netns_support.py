"""Machines as Linux network namespaces, for the tests and benchmarks that need more than one
(tests/cluster/test_namespaces.py, benchmarks/netns.py).

A namespace of the test's own holds a bridge; each host is a namespace joined to it by a veth
pair, with a private address on one /24. Each host has a loopback of its own (a machine's
traffic to its own address goes over it), which reaches nothing of another host: a part of a run
that assumed its peer on 127.0.0.1 finds nobody there. Names carry the creating
process's PID and a random tag, so two runs never meet, and a later run removes what a crashed
one left (its processes, by the PIDs in its namespaces, then the namespaces). Every process a
host runs is started here, by `Hosts.popen`, and ended by its PID.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dbladder.service.server import stop_process_tree

PREFIX = "dblnt"
SUBNET = "10.213.0"
"""The hosts' /24: private, and only ever inside this module's own namespaces."""


def unavailable() -> str | None:
    """Why namespaces cannot be made here (None: they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    if shutil.which("ip") is None:
        return "no `ip` program (iproute2)"
    probe = f"{PREFIX}-{os.getpid()}-probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"ip netns add is not allowed here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _ours() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(f"{PREFIX}-")]


def _remove(namespace: str) -> None:
    """End the processes left in `namespace` (this module started each one), then delete it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = subprocess.run(
            ["ip", "netns", "pids", namespace], capture_output=True, text=True
        ).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), sig)
        if pids and sig == signal.SIGTERM:
            time.sleep(2)
    subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=30)


def remove_leftovers() -> list[str]:
    """Remove the namespaces of earlier runs whose creating process is gone; their names."""
    removed = []
    for namespace in _ours():
        parts = namespace.split("-")
        if len(parts) >= 2 and parts[1].isdigit() and int(parts[1]) != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(parts[1]), 0)
                continue  # its run is still going
            _remove(namespace)
            removed.append(namespace)
    return removed


@dataclass
class Host:
    name: str
    namespace: str
    address: str

    def command(self, *args: str) -> list[str]:
        """`args` run in this host's namespace."""
        return ["ip", "netns", "exec", self.namespace, *args]


@dataclass
class Hosts:
    tag: str
    folder: Path
    hosts: dict[str, Host]
    bridge: str
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def popen(self, host: str, name: str, args: list[str], env: dict[str, str] | None = None) -> Path:
        """Start `args` on `host`, its output in a log of its own; the log's path."""
        log = self.folder / f"{name}.log"
        with log.open("w") as handle:
            popen = subprocess.Popen(
                self.hosts[host].command(*args),
                stdout=handle,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                start_new_session=True,  # its session is what end() stops: its children too
            )
        self.processes.append((name, popen))
        return log

    def run(self, host: str, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """Run `args` on `host` to the end (bounded by `timeout`)."""
        return subprocess.run(
            self.hosts[host].command(*args), capture_output=True, text=True, timeout=timeout
        )

    def end(self) -> None:
        """End every process started here and what it started (its session), the last first."""
        for _, popen in reversed(self.processes):
            stop_process_tree(popen, timeout=15)


def wait_for(log: Path, text: str, process: subprocess.Popen[bytes] | None, timeout: float) -> None:
    """Until `text` is in the log (RuntimeError with the log's end when it does not come)."""
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
            raise RuntimeError(f"{log.name}: no {text!r}: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)


@contextlib.contextmanager
def namespaces(names: list[str], folder: Path) -> Iterator[Hosts]:
    """A host (namespace, address SUBNET.1, .2, ...) per name, on one bridge; everything removed
    after the block, also when it fails: the processes started, then the namespaces."""
    remove_leftovers()
    folder.mkdir(parents=True, exist_ok=True)
    tag = f"{PREFIX}-{os.getpid()}-{secrets.token_hex(3)}"
    bridge = f"{tag}-br"
    made: list[str] = []
    hosts = Hosts(tag, folder, {}, bridge)
    try:
        _ip("netns", "add", bridge)
        made.append(bridge)
        _ip("-n", bridge, "link", "add", "br0", "type", "bridge")
        _ip("-n", bridge, "link", "set", "br0", "up")
        for number, name in enumerate(names, start=1):
            namespace = f"{tag}-{name}"
            _ip("netns", "add", namespace)
            made.append(namespace)
            # Made inside the bridge's namespace, the pair's names never meet another run's.
            _ip(
                "-n",
                bridge,
                "link",
                "add",
                f"v{number}",
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                namespace,
            )
            _ip("-n", bridge, "link", "set", f"v{number}", "master", "br0", "up")
            address = f"{SUBNET}.{number}"
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            hosts.hosts[name] = Host(name, namespace, address)
        yield hosts
    finally:
        hosts.end()
        for namespace in reversed(made):
            _remove(namespace)
