"""The ceiling through one load agent against the same fleet on this machine, in the same run.

    python benchmarks/cluster.py [--service-ms 2.5] [--rounds 1] [--budget 40]

Against the known FIFO server of tests/known_servers.py (capacity exactly 1000 / service-ms
requests a second), the ceiling search runs `--rounds` times each way, alternating: with one
generator process on this machine (no Dask), and with the same one process on one load agent
(`dbladder agent`, a Dask worker on this machine, started and ended here by its PID). Printed: each
ceiling, its distance from the capacity, and the ratio agent / local per round and their median.
Dask carries only the control messages, so the ratio should be 1 within the search's resolution
(5 %); the agent's own cost is its poll every half second and its worker's heartbeat.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from cluster_support import loopback_cluster
from known_servers import known_server

from dbladder.plans import Search
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round


def ceiling(config: RunConfig) -> float:
    return float(run_round(config).to_json()["ceiling_rps"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service-ms", type=float, default=2.5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--budget", type=float, default=40)
    args = parser.parse_args()
    search = Search(start=150, hold=2.5, warmup=0.5, settle=0.5, budget=args.budget)
    ratios = []
    with tempfile.TemporaryDirectory() as folder, known_server("fifo", service_ms=args.service_ms) as server:
        root = Path(folder)
        with loopback_cluster(root / "cluster", {"load-1": {}}) as cluster:
            base = RunConfig(
                db_url=f"sqlite:///{root}/shop.db",
                plan=search,
                sizes={"products": 2000, "orders": 5000},
                service_url=server.url,
                generator_processes=1,
            )
            for number in range(1, args.rounds + 1):
                local = ceiling(dataclasses.replace(base, out_dir=root / f"local-{number}"))
                agent = ceiling(
                    dataclasses.replace(base, out_dir=root / f"agent-{number}", cluster=cluster.address)
                )
                ratios.append(agent / local)
                print(
                    f"round {number}: capacity {server.capacity:.0f}/s; local fleet {local:.0f}/s "
                    f"({local / server.capacity - 1:+.1%}), one agent {agent:.0f}/s "
                    f"({agent / server.capacity - 1:+.1%}); agent / local {agent / local:.3f}",
                    flush=True,
                )
    print(f"median agent / local over {len(ratios)} round(s): {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
