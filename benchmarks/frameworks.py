"""The service's hand-written RSGI router against Starlette on granian's ASGI interface.

    pip install --target /tmp/starlette_pkgs starlette
    PYTHONPATH=/tmp/starlette_pkgs python benchmarks/frameworks.py [--seconds 5] [--rounds 3]

Starlette is not a dependency; it is only measured. Both apps answer GET /healthz and
GET /products/{id} (SQLite, the same engine and shop operation, msgspec for JSON) on granian with
one worker and the service's settings; wrk -t1 -c50 drives them in alternating rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import tempfile
from contextlib import asynccontextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

from service import Target, wait_for_port, wrk

from dbladder.data.seeding import seed_shop
from dbladder.engines import opened
from dbladder.service import ServiceConfig, running_service
from dbladder.service.server import granian_server, with_free_port
from dbladder.workloads import shop


def starlette_app(url: str) -> Any:
    import msgspec
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with opened(url) as engine:
            state["engine"] = engine
            yield

    async def healthz(request: Any) -> Response:
        return Response(b'{"status":"ok"}', media_type="application/json")

    async def product(request: Any) -> Response:
        found = await shop.product_by_id(state["engine"], request.path_params["id"])
        if found is None:
            return Response(b'{"error":"not_found"}', status_code=404, media_type="application/json")
        return Response(msgspec.json.encode(found), media_type="application/json")

    return Starlette(
        routes=[Route("/healthz", healthz), Route("/products/{id:int}", product)], lifespan=lifespan
    )


def serve_starlette(url: str, port: int) -> None:
    from granian.constants import Interfaces

    server = granian_server(ServiceConfig(url, port=port))
    server.interface = Interfaces.ASGI
    server.serve(target_loader=lambda: starlette_app(url), wrap_loader=False)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--serve-starlette", nargs=2, metavar=("URL", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_starlette:
        serve_starlette(args.serve_starlette[0], int(args.serve_starlette[1]))
        return

    with tempfile.TemporaryDirectory(prefix="dbladder-bench-") as folder:
        url = f"sqlite:///{folder}/shop.db"

        async def load() -> None:
            async with opened(url) as engine:
                await seed_shop(engine, shop.SeedConfig(products=args.products, orders=1_000))

        asyncio.run(load())
        script = Path(folder) / "product.lua"
        script.write_text(
            f'math.randomseed(1)\nrequest = function()\n  return wrk.format("GET", "/products/" .. '
            f"math.random(1, {args.products}))\nend\n"
        )
        port = with_free_port(ServiceConfig(url, port=0)).port
        other = subprocess.Popen(
            [sys.executable, __file__, "--serve-starlette", url, str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_port(port)
            with running_service(ServiceConfig(url, port=0, workers=1)) as service:
                targets = [
                    Target("RSGI router GET /healthz", f"{service.url}/healthz", service.pid),
                    Target("Starlette (ASGI) GET /healthz", f"http://127.0.0.1:{port}/healthz", other.pid),
                    Target("RSGI router GET /products/{id}", f"{service.url}/", service.pid, script),
                    Target(
                        "Starlette (ASGI) GET /products/{id}", f"http://127.0.0.1:{port}/", other.pid, script
                    ),
                ]
                for target in targets:
                    wrk(target.url, 1, 50, target.script)
                for _ in range(args.rounds):
                    for target in targets:
                        target.run(args.seconds, 50)
        finally:
            other.send_signal(signal.SIGTERM)
            other.wait(30)
    print(
        f"granian {version('granian')}, starlette {version('starlette')}; median of {args.rounds} runs of "
        f"wrk -t1 -c50 -d{args.seconds:g}s"
    )
    print(f"{'target':<40} {'req/s':>9}   {'CPU/request':>11}")
    for target in targets:
        print(f"{target.name:<40} {target.rate:>9,.0f}   {target.cpu_us:>8.1f} us")


if __name__ == "__main__":
    main()
