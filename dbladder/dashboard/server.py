"""The dashboard's HTTP server: one page, its stream of server-sent events, its JSON and /metrics.

The standard library's `ThreadingHTTPServer` in a daemon thread of the run's own process: the
page has a handful of readers at most, each stream a thread that sleeps on the state's condition
until a new version (about one a second), so nothing here competes with the load. The service's
server (granian) is a server of worker processes for an app, not one to run inside the run's
process beside its loop, and an ASGI stack would be a second event loop for four routes.

    /            the page (page.html), the document as it is now written into it, so the page
                 shows everything at once and stays readable when the stream ends
    /events      text/event-stream: the document each time it changes ("data:" one JSON line),
                 a comment every KEEPALIVE seconds otherwise; closed after the run's last state
    /state.json  the document
    /metrics     OpenMetrics text (metrics.py)
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import Any

from ..errors import UsageError
from ..urls import is_loopback
from .metrics import CONTENT_TYPE, metrics_text
from .state import DashboardState

KEEPALIVE = 15.0
"""Seconds between comments on a quiet stream, so a proxy or the browser does not drop it."""
POLL = 0.1
"""Seconds between the serving thread's checks for a shutdown (the standard library's 0.5 would
add half a second to every run's end)."""
DEFAULT_HOST = "127.0.0.1"
STATE_MARK = "/*STATE*/null"
"""Where the page's template takes the document as it is when the page is served."""


class DashboardUnavailable(UsageError):
    """The dashboard cannot listen where it was asked to (a port in use, an address not here)."""


class RemoteDashboard(UsageError):
    """A dashboard on an address other hosts can reach, without --allow-remote-dashboard."""


def parse_address(text: str) -> tuple[str, int]:
    """(host, port) from "[HOST:]PORT" ("8090", "127.0.0.1:8090", "[::1]:8090"); UsageError else."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--dashboard takes [HOST:]PORT, a port from 0 to 65535 (e.g. 8090), not {text!r}")
    return host, int(port)


def check_address(host: str, allow_remote: bool) -> None:
    """Refuse a host other machines can reach unless `allow_remote` (--allow-remote-dashboard)."""
    if allow_remote or is_loopback(host):
        return
    every = " (every address of this machine)" if host in ("0.0.0.0", "::") else ""
    raise RemoteDashboard(
        f"the dashboard would listen on {host}{every}, which is not a loopback address; it shows the "
        "run to anyone who can reach it, so it listens on loopback only unless --allow-remote-dashboard "
        "is given"
    )


def page_template() -> str:
    return files("dbladder.dashboard").joinpath("page.html").read_text(encoding="utf-8")


def page_with(state_text: str, live: bool) -> bytes:
    """The page with the document written into it; `live`: it opens the stream for more."""
    # "</" would end the script element early; JSON allows "<\/" for it.
    inlined = state_text.replace("</", "<\\/")
    page = page_template().replace(STATE_MARK, inlined).replace("/*LIVE*/false", "true" if live else "false")
    return page.encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the run's own progress is what the terminal shows

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        state = self.server.state
        if path == "/":
            page = page_with(state.text()[1], self.server.live)
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", page)
        elif path == "/state.json":
            self._send(HTTPStatus.OK, "application/json", state.text()[1].encode())
        elif path == "/metrics":
            self._send(HTTPStatus.OK, CONTENT_TYPE, metrics_text(state))
        elif path == "/events":
            self._stream()
        else:
            self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", b"not found\n")

    def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _stream(self) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        state, stopping = self.server.state, self.server.stopping
        sent = -1
        with self.server.counting(), contextlib.suppress(OSError):  # OSError: the reader went away
            while True:
                version, text = state.text()
                if version != sent:
                    self.wfile.write(f"id: {version}\ndata: {text}\n\n".encode())
                    sent = version
                elif stopping.is_set():
                    break
                else:
                    self.wfile.write(b": still here\n\n")
                self.wfile.flush()
                if state.data["ended"] and sent == state.version:
                    break
                state.wait(sent, timeout=0.5 if stopping.is_set() else KEEPALIVE)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a reader still streaming never keeps the process alive

    def __init__(self, address: tuple[str, int], state: DashboardState, live: bool):
        self.state = state
        self.live = live
        self.stopping = threading.Event()
        self.streams = 0
        self._streams_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        """Count a stream while it is open (closing waits for the last ones to send the last state)."""
        with self._streams_lock:
            self.streams += 1
        try:
            yield
        finally:
            with self._streams_lock:
                self.streams -= 1


class DashboardServer:
    """The dashboard served from a thread of this process. Use as a context manager: leaving it
    ends the state (the page keeps it), gives the streams a moment to send it, and stops."""

    def __init__(self, state: DashboardState, host: str = DEFAULT_HOST, port: int = 0, live: bool = True):
        try:
            self._server = _Server((host, port), state, live)
        except OSError as exc:
            raise DashboardUnavailable(
                f"the dashboard cannot listen on {_where(host, port)}: {exc.strerror or exc}"
            ) from None
        self.state = state
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL,), name="dashboard", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{_where(str(host), int(port))}/"

    def __enter__(self) -> DashboardServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self, linger: float = 1.0) -> None:
        """Stop serving; streams get up to `linger` seconds to send the last state first."""
        self._server.stopping.set()
        self.state.wake()
        give_up = time.monotonic() + linger
        while self._server.streams and time.monotonic() < give_up:
            time.sleep(0.02)
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def serve_until_interrupted(self) -> None:
        """Serve in this thread until Ctrl-C (`dbladder report --serve`)."""
        with contextlib.suppress(KeyboardInterrupt):
            self._server.serve_forever()
        self._server.server_close()


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
