"""The single SQLite writer's keeper: start it, notice when it dies, start another.

Without a keeper a writer that died (killed, out of memory, a bug) left every write answered 503
until the service was restarted: the workers reconnect by themselves, but nobody started a new
writer. The keeper is a thread of the service's main process (granian's), blocked on the
writer's process sentinel, so it notices a death at once and costs nothing meanwhile. The new
writer takes over the dead one's counters slot and adds one to `writer_restarts`; the workers
report the writer's state in `/stats` and `/healthz` from the slots (`app.py`).

Writes that were in the dead writer's hands when it died got a 503 (the worker's connection
closed): none of them was acknowledged, so the integrity check counts none of them as lost,
whatever the database kept.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import threading
import time
from multiprocessing.process import BaseProcess

from ..errors import ServiceFailed
from .config import RuntimePaths, ServiceConfig
from .writer import run_writer_process

log = logging.getLogger(__name__)

WRITER_START_SECONDS = 30.0
RETRY_SECONDS = 1.0
"""Wait between attempts when a new writer fails to start (the database may be briefly busy)."""


def start_writer(config: ServiceConfig, paths: RuntimePaths, restart: bool = False) -> BaseProcess:
    """Start the writer process and wait until it accepts writes; ServiceFailed saying why not."""
    # spawn, not fork: the writer starts from a clean interpreter, whatever this process holds.
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(
        target=run_writer_process,
        args=(config, paths.writer_socket, paths.stats, send, restart),
        name="dbladder-sqlite-writer",
    )
    process.start()
    send.close()
    try:
        if not receive.poll(WRITER_START_SECONDS):
            raise ServiceFailed(f"the SQLite writer did not start within {WRITER_START_SECONDS:g} s")
        problem = receive.recv()
    except EOFError:
        problem = f"the SQLite writer exited during start (exit code {process.exitcode})"
    except BaseException:
        stop_writer(process, 1.0)
        raise
    finally:
        receive.close()
    if problem:
        stop_writer(process, 1.0)
        raise ServiceFailed(problem)
    return process


def stop_writer(process: BaseProcess, timeout: float) -> None:
    """SIGTERM (the writer finishes the writes it holds), SIGKILL after `timeout` seconds."""
    if process.is_alive():
        process.terminate()
        process.join(timeout)
        if process.is_alive():
            process.kill()
    process.join()


class WriterKeeper:
    """Keeps one writer process running for a service; `start()` once, `stop()` at the end."""

    def __init__(self, config: ServiceConfig, paths: RuntimePaths):
        self.config = config
        self.paths = paths
        self.restarts = 0
        self._process: BaseProcess | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="dbladder-writer-keeper", daemon=True)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Start the writer (ServiceFailed if it cannot) and begin watching it."""
        self._process = start_writer(self.config, self.paths)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.is_set():
            process = self._process
            if process is None:
                return
            multiprocessing.connection.wait([process.sentinel], timeout=1.0)
            with self._lock:
                if self._stopping.is_set() or process.is_alive():
                    continue
                process.join()
                log.error(
                    "the SQLite writer (PID %s) ended with exit code %s; starting another",
                    process.pid,
                    process.exitcode,
                )
                try:
                    self._process = start_writer(self.config, self.paths, restart=True)
                except ServiceFailed as exc:
                    log.error("could not start another SQLite writer: %s; trying again", exc)
                    self._process = process  # watched again: still dead, so the next turn retries
                    time.sleep(RETRY_SECONDS)
                    continue
                self.restarts += 1

    def stop(self, timeout: float) -> None:
        """Stop watching, then stop the writer (it finishes the writes it holds)."""
        with self._lock:
            self._stopping.set()
            if self._process is not None:
                stop_writer(self._process, timeout)
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
