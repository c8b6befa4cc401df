"""What a db agent costs the database's host while it waits, and while it samples for a run.

    python benchmarks/cluster_idle.py [--seconds 30]

Issue 24 puts `dbladder agent --role db` on the database's machine, whose CPUs are the thing
measured: its own cost must be small beside them. In one run, on this machine, three windows of
`--seconds` each:

  1. no agent: the host's CPU in use (/proc/stat, as dbladder/observe/host.py reads it);
  2. a db agent joined to a scheduler on loopback, idle (its Dask worker's heartbeats only);
  3. the same agent sampling its host every second, as during a run (the coordinator's DbAgent
     actor placed on it, as `run --cluster` does);
  4. the reference: a plain Dask worker (`python -m distributed.cli.dask_worker`, no nanny) joined
     to the same scheduler with Dask's defaults but the profiler off, idle.

Printed per window: the host's CPU in use (% of all its CPUs), and for the agent's process its
CPU (% of one core, from its own CPU time over the window: the figure that does not depend on
what else the machine is doing) and its memory (RSS and USS). The scheduler runs here too, but it
is not on the database host in a real cluster and is not counted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from cluster_support import loopback_cluster

from dbladder.cluster.coordinator import Cluster
from dbladder.observe.host import host_delta, read_host


def window(seconds: float, pid: int | None) -> dict[str, float]:
    """The host's busy share over `seconds`, and the process `pid`'s CPU and memory if given."""
    process = psutil.Process(pid) if pid is not None else None
    cpu_before = sum(process.cpu_times()[:4]) if process else 0.0
    before, started = read_host(), time.perf_counter()
    time.sleep(seconds)
    after, took = read_host(), time.perf_counter() - started
    host = host_delta(before, after)
    figures = {"host_busy_pct": host.busy}
    if process is not None:
        figures["agent_cpu_pct"] = 100.0 * (sum(process.cpu_times()[:4]) - cpu_before) / took
        memory = process.memory_full_info()
        figures["agent_rss_mib"] = memory.rss / 2**20
        figures["agent_uss_mib"] = memory.uss / 2**20
    return figures


def line(name: str, figures: dict[str, float]) -> str:
    text = f"{name:<28} host CPU in use {figures['host_busy_pct']:5.1f} %"
    if "agent_cpu_pct" in figures:
        text += (
            f"; the process {figures['agent_cpu_pct']:.2f} % of a core, "
            f"RSS {figures['agent_rss_mib']:.0f} MiB, USS {figures['agent_uss_mib']:.0f} MiB"
        )
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    print(f"{psutil.cpu_count()} CPUs, load average {psutil.getloadavg()[0]:.1f} at the start", flush=True)
    print(line("no agent", window(args.seconds, None)), flush=True)
    with (
        tempfile.TemporaryDirectory() as folder,
        loopback_cluster(Path(folder), {"db-1": {"role": "db"}}) as cluster,
    ):
        pid = cluster.agents["db-1"].pid
        time.sleep(2.0)  # past the worker's start-up
        print(line("db agent, idle", window(args.seconds, pid)), flush=True)
        with Cluster(cluster.address, roles=("db",)):  # its DbAgent samples the host every second
            print(line("db agent, sampling each 1 s", window(args.seconds, pid)), flush=True)
        print(line("plain Dask worker, idle", plain_worker(cluster.address, args.seconds)), flush=True)
    print(f"load average {psutil.getloadavg()[0]:.1f} at the end")


def plain_worker(address: str, seconds: float) -> dict[str, float]:
    """Window 4: Dask's own worker with its defaults (its event loop's 20 ms tick, its memory
    monitor every 100 ms, its system monitor every 500 ms), the profiler off as an agent has it."""
    environment = {**os.environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    command = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
    command += ["--no-nanny", "--no-dashboard", "--name", "plain"]
    worker = subprocess.Popen(command, env=environment, stderr=subprocess.DEVNULL)
    try:
        time.sleep(6.0)  # its import and join, then past its start-up
        return window(seconds, worker.pid)
    finally:
        worker.terminate()
        worker.wait(timeout=15)


if __name__ == "__main__":
    main()
