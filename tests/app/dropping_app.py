"""A small real web app for the tests of a request file's SQL after the load: on any of the three
engines (through dbladder's own, from the environment `--app` gives it), it answers every GET
with 200 and a POST to /drop by dropping the `audit` table, as an app's migration run during a
load might, and answering 200."""

import asyncio
import http.server
import os
import sys
import threading

from dbladder.engines import opened
from dbladder.urls import parse_url

LOCK = threading.Lock()


def database_url() -> str:
    """The run's database as dbladder names it, from the pieces of the app's environment."""
    engine = os.environ["DBLADDER_DB_ENGINE"]
    if engine == "sqlite":
        return f"sqlite:///{os.environ['DBLADDER_DB_PATH']}"
    user, host, port = (os.environ[f"DBLADDER_DB_{name}"] for name in ("USER", "HOST", "PORT"))
    return f"{engine}://{user}@{host}:{port}/{os.environ['DBLADDER_DB_NAME']}"


async def drop_audit() -> None:
    async with opened(parse_url(database_url())) as engine, engine.transaction() as session:
        await session.execute("DROP TABLE IF EXISTS audit")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_GET(self) -> None:
        self.answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/drop":
            with LOCK:
                asyncio.run(drop_audit())
        self.answer()

    def log_message(self, *args) -> None:
        pass


if __name__ == "__main__":
    http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
