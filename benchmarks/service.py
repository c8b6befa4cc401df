"""How much the web service costs on top of its server, and on top of a SQLite point read.

    python benchmarks/service.py [--seconds 5] [--rounds 3] [--connections 50]

Prints, from one run on one worker each, with wrk -t1 -cN:
  * req/s of a bare hello-world RSGI app on granian configured exactly as the service runs it;
  * req/s of the service's GET /healthz, and its ratio to hello world (goal >= 0.8);
  * req/s of GET /products/{random id} on SQLite, and its ratio to /healthz (goal >= 0.5);
  * CPU time per request of the serving processes (all threads: granian's Rust I/O and Python),
    and the app's own time per request, called in-process without HTTP.
Targets are run in alternation for several rounds and each figure is the median, because this
machine is shared and noisy; every round is printed too, with the load average around the run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import apsw
import uvloop

from dbladder.data.seeding import seed_shop
from dbladder.engines import opened
from dbladder.service import ServiceConfig, running_service, stats
from dbladder.service.app import ShopApp
from dbladder.service.config import RuntimePaths
from dbladder.service.server import granian_server, session_members, with_free_port
from dbladder.workloads import shop

HEALTHZ_GOAL = 0.8
PRODUCT_GOAL = 0.5
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- the bare app, served by `--serve-hello PORT` in a child process ------------------------------

_HELLO_HEADERS = [("content-type", "text/plain")]


async def hello(scope: object, proto: object) -> None:
    proto.response_bytes(200, _HELLO_HEADERS, b"Hello, world!")  # type: ignore[attr-defined]


def load_hello() -> object:
    return hello


def serve_hello(port: int) -> None:
    server = granian_server(ServiceConfig("sqlite:///unused.db", port=port))
    server.serve(target_loader=load_hello, wrap_loader=False)


# -- measuring ------------------------------------------------------------------------------------


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of the processes (every thread), from /proc."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK_TICKS


def wrk(url: str, seconds: float, connections: int, script: Path | None = None) -> tuple[float, int, str]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s"]
    if script is not None:
        command += ["-s", str(script)]
    command.append(url)
    output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=seconds + 30).stdout
    if "Non-2xx" in output or "Socket errors" in output:
        raise SystemExit(f"wrk saw errors against {url}:\n{output}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    count = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    return rate, count, " ".join(command)


class Target:
    def __init__(self, name: str, url: str, session: int, script: Path | None = None):
        self.name, self.url, self.session, self.script = name, url, session, script
        self.rates: list[float] = []
        self.cpu_per_request: list[float] = []
        self.command = ""

    def run(self, seconds: float, connections: int) -> None:
        pids = session_members(self.session)
        before = cpu_seconds(pids)
        rate, count, self.command = wrk(self.url, seconds, connections, self.script)
        self.cpu_per_request.append((cpu_seconds(pids) - before) / count)
        self.rates.append(rate)

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    @property
    def cpu_us(self) -> float:
        return statistics.median(self.cpu_per_request) * 1e6


class _Scope:
    """The two fields the app's router reads, for calling the app without a server."""

    method = "GET"
    query_string = ""

    def __init__(self, path: str):
        self.path = path


class _Protocol:
    def response_bytes(self, status: int, headers: object, body: bytes) -> None:
        if status != 200:
            raise SystemExit(f"the app answered {status}: {body!r}")


def app_microseconds(url: str, paths: list[str], requests: int) -> list[float]:
    """The app's own time per request for each path list, called in-process (no HTTP, no granian)."""
    with tempfile.TemporaryDirectory() as folder:
        stats_path = Path(folder) / "stats"
        stats.create(stats_path, slots=1)
        app = ShopApp(ServiceConfig(url), RuntimePaths(stats_path))
        loop = uvloop.new_event_loop()
        app.__rsgi_init__(loop)
        protocol = _Protocol()

        async def timed(scopes: list[_Scope]) -> float:
            started = time.perf_counter()
            for i in range(requests):
                await app.__rsgi__(scopes[i % len(scopes)], protocol)  # type: ignore[arg-type]
            return (time.perf_counter() - started) / requests * 1e6

        results = [
            loop.run_until_complete(timed([_Scope(path) for path in group]))
            for group in [paths[:1], paths[1:]]
        ]
        app.__rsgi_del__(loop)
        loop.close()
    return results


def wait_for_port(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--serve-hello", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_hello:
        serve_hello(args.serve_hello)
        return

    with tempfile.TemporaryDirectory(prefix="dbladder-bench-") as folder:
        url = f"sqlite:///{folder}/shop.db"
        seed = shop.SeedConfig(products=args.products, orders=1_000)

        async def load() -> None:
            async with opened(url) as engine:
                await seed_shop(engine, seed)

        asyncio.run(load())
        script = Path(folder) / "product.lua"
        script.write_text(
            f'math.randomseed(1)\nrequest = function()\n  return wrk.format("GET", "/products/" .. '
            f"math.random(1, {args.products}))\nend\n"
        )
        hello_port = with_free_port(ServiceConfig(url, port=0)).port
        hello_server = subprocess.Popen(
            [sys.executable, __file__, "--serve-hello", str(hello_port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_port(hello_port)
            with running_service(ServiceConfig(url, port=0, workers=1)) as service:
                targets = [
                    Target(
                        "hello world (bare RSGI app)", f"http://127.0.0.1:{hello_port}/", hello_server.pid
                    ),
                    Target("service GET /healthz", f"{service.url}/healthz", service.pid),
                    Target("service GET /products/{id} (SQLite)", f"{service.url}/", service.pid, script),
                ]
                for target in targets:  # warm up: connections, statement caches, page cache
                    wrk(target.url, 1, args.connections, target.script)
                load_before = os.getloadavg()
                for _ in range(args.rounds):
                    for target in targets:
                        target.run(args.seconds, args.connections)
                load_after = os.getloadavg()
        finally:
            hello_server.send_signal(signal.SIGTERM)
            hello_server.wait(30)

        in_process = app_microseconds(
            url, ["/healthz"] + [f"/products/{1 + (i * 7919) % args.products}" for i in range(1000)], 100_000
        )

    hello_world, healthz, product = targets
    print(
        f"python {platform.python_version()}, granian {version('granian')} (RSGI, 1 worker, uvloop), "
        f"msgspec {version('msgspec')}, SQLite {apsw.sqlite_lib_version()} via apsw {apsw.apsw_version()}"
    )
    print(
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), load average "
        f"{load_before[0]:.2f} before and {load_after[0]:.2f} after the runs; {args.products:,} products"
    )
    print(f"each figure: median of {args.rounds} alternating runs of: {product.command}")
    print()
    print(f"{'target':<40} {'req/s':>9}   {'CPU/request':>11}   runs (req/s)")
    for target in targets:
        runs = ", ".join(f"{r:,.0f}" for r in target.rates)
        print(f"{target.name:<40} {target.rate:>9,.0f}   {target.cpu_us:>8.1f} us   {runs}")
    print()
    healthz_ratio = healthz.rate / hello_world.rate
    product_ratio = product.rate / healthz.rate
    verdict = {True: "goal met", False: "GOAL MISSED"}
    print(
        f"/healthz / hello world       = {healthz_ratio:.2f}  (goal >= {HEALTHZ_GOAL}: "
        f"{verdict[healthz_ratio >= HEALTHZ_GOAL]})"
    )
    print(
        f"/products/{{id}} / /healthz   = {product_ratio:.2f}  (goal >= {PRODUCT_GOAL}: "
        f"{verdict[product_ratio >= PRODUCT_GOAL]})"
    )
    print(
        f"app CPU per request: /healthz {healthz.cpu_us - hello_world.cpu_us:+.1f} us over hello world, "
        f"/products/{{id}} {product.cpu_us - healthz.cpu_us:+.1f} us over /healthz"
    )
    print(
        f"the app alone, called in-process without HTTP: /healthz {in_process[0]:.1f} us, "
        f"/products/{{id}} {in_process[1]:.1f} us per request"
    )


if __name__ == "__main__":
    main()
