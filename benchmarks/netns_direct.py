"""Direct mode on PostgreSQL with the generator in a namespace of its own, against pgbench run
from that same namespace, in the same run (issue 24).

    python benchmarks/netns_direct.py [--products 20000] [--orders 50000] [--connections 8]
                                      [--budget 60] [--seconds 10] [--apart]

As root (it skips, saying why, elsewhere): two hosts made with `ip netns` on one bridge
(tests/netns_support.py), a managed PostgreSQL listening on the db host's private address
(`dbladder db start postgresql --host`), and on the load host `dbladder run --target direct`
(its ceiling search seeds the shop) and then `dbladder bench --native --result` on the same data:
pgbench -M prepared over the same route with the same connections, and the share of it that
direct mode's ceiling holds. With `--apart` the hosts do not share their cores either: everything
on the load host runs on CPU 0 and the server (with every backend it forks) on CPU 1, taskset's
affinity being inherited, as two one-core machines would be. Every process is started here and
ended by its PID; the namespaces and the server are removed after the run, also when it fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from netns_support import namespaces, unavailable

DBLADDER = [sys.executable, "-m", "dbladder"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--products", type=int, default=20_000)
    parser.add_argument("--orders", type=int, default=50_000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--apart", action="store_true", help="the load host on CPU 0, the db host on CPU 1")
    args = parser.parse_args()
    reason = unavailable()
    if reason is not None:
        sys.exit(f"skipped: {reason}")
    with (
        tempfile.TemporaryDirectory(prefix="dbladder-netns-") as folder,
        namespaces(["load", "db"], Path(folder) / "hosts") as hosts,
    ):
        db = hosts["db"].address
        on_db, on_load = (["taskset", "-c", "1"], ["taskset", "-c", "0"]) if args.apart else ([], [])
        started = hosts.run(
            "db", [*on_db, *DBLADDER, "db", "start", "postgresql", "--host", db, "--json"], 120
        )
        if started.returncode != 0:
            sys.exit(started.stderr)
        server = json.loads(started.stdout)
        try:
            out = Path(folder) / "out"
            sizes = ["--size", f"products={args.products}", "--size", f"orders={args.orders}"]
            run = hosts.run(
                "load",
                [*on_load, *DBLADDER, "run", "--target", "direct", "--db", server["url"],
                 "--allow-remote-target", *sizes, "--writes", "0", "--pool", str(args.connections),
                 "--budget", str(args.budget), "--no-integrity", "--out", str(out)],
                timeout=args.budget * 3 + 300,
            )  # fmt: skip
            if run.returncode != 0:
                sys.exit(run.stderr[-3000:])
            bench = hosts.run(
                "load",
                [*on_load, *DBLADDER, "bench", "--native", "--db", server["url"],
                 "--connections", str(args.connections), "--seconds", str(args.seconds),
                 "--result", str(out), "--json"],
                timeout=args.seconds * 10 + 120,
            )  # fmt: skip
            if bench.returncode != 0:
                sys.exit(bench.stderr[-3000:])
        finally:
            hosts.run("db", [*DBLADDER, "db", "stop", server["name"]], 120)
        result = json.loads((out / "result.json").read_text())
        native = json.loads(bench.stdout)
    ceiling = float(result["ceiling_rps"])
    cores = " (load host on CPU 0, db host on CPU 1)" if args.apart else " (sharing the machine's cores)"
    print(f"hosts: load {hosts['load'].address}, db {db} (PostgreSQL {server['server_version']}){cores}")
    stopped = result["search"]["stopped_because"]
    print(f"direct mode from the load host: ceiling {ceiling:,.0f} req/s ({stopped})")
    print(json.dumps(native, indent=2))


if __name__ == "__main__":
    main()
