"""A known-answer app for `--app` (tests/known_servers.py's fifo server as a command): one
request at a time, each taking exactly SERVICE_MS, and the first request for each path COLD_MS
more. Its warm capacity is 1000 / SERVICE_MS requests/s; its cold start costs COLD_MS per path.

    python known_app.py PORT SERVICE_MS COLD_MS   # serve on 127.0.0.1:PORT until SIGTERM
    python known_app.py setup ROWS                # the `items` table of ROWS ids, at DBLADDER_DB_PATH

Its data is only what a request file's `Param.rows("SELECT id FROM items")` reads: the paths.
"""

import os
import socket
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from known_servers import Rule, _serve


class _Ready:
    def send(self, _: object) -> None:
        print("ready", flush=True)


def setup(rows: int) -> None:
    with sqlite3.connect(os.environ["DBLADDER_DB_PATH"]) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY)")
        connection.executemany(
            "INSERT OR IGNORE INTO items (id) VALUES (?)", [(i,) for i in range(1, rows + 1)]
        )


def serve(port: int, service_ms: float, cold_ms: float) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(4096)
    _serve(Rule("fifo", service_ms=service_ms, cold_ms=cold_ms), sock, _Ready())


if __name__ == "__main__":
    if sys.argv[1] == "setup":
        setup(int(sys.argv[2]))
    else:
        serve(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]))
