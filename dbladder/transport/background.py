"""Running a relay for a while: in a background thread, or in a process of its own.

`relay_process` is what a run should use: the relay then shares no interpreter (and no GIL) with
the caller. In a thread of a busy process a held chunk waits for the GIL as well as for its timer
(measured: up to 28 ms late in a thread beside an asyncpg client, against 1.7-5 ms in a process),
so `background_relay` is for tests and tools whose own thread mostly waits.

    python -m dbladder.transport.background TARGET --delay-ms MS

relays until SIGTERM or SIGINT, printing `listening HOST PORT` when ready and `stats {json}` at
the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import DbladderError
from .relay import Relay, RelayFailed, RelayStats, RelayTarget, precise_loop

START_TIMEOUT = 10.0  # seconds for a relay thread or process to start listening
STOP_TIMEOUT = 5.0


class RelayThread:
    """A relay on its own selector event loop in a daemon thread; `stop()` shuts it down cleanly."""

    def __init__(self, target: RelayTarget, delay_ms: float):
        self.relay = Relay(target, delay_ms)
        self._loop = precise_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="dbladder-relay", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self.relay.start())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            self._loop.close()
            return
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.run_until_complete(self.relay.stop())
            self._loop.close()

    def start(self) -> tuple[str, int]:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            raise RelayFailed(f"the relay to {self.relay.target} did not start in {START_TIMEOUT:.0f} s")
        if self._error is not None:
            raise RelayFailed(f"the relay to {self.relay.target} could not listen: {self._error}")
        return self.relay.address

    def stop(self) -> RelayStats:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(STOP_TIMEOUT)
        return self.relay.stats


@contextmanager
def background_relay(target: RelayTarget, delay_ms: float) -> Iterator[RelayThread]:
    """A relay running in a background thread for the block; `.relay.address` is where to connect."""
    thread = RelayThread(target, delay_ms)
    thread.start()
    try:
        yield thread
    finally:
        thread.stop()


@dataclass
class RelayProcess:
    """A relay in its own process: where it listens, and (after the block) what it forwarded."""

    address: tuple[str, int]
    process: subprocess.Popen[str]
    stats: RelayStats = field(default_factory=RelayStats)


@contextmanager
def relay_process(
    target: RelayTarget, delay_ms: float, place: Callable[[], None] | None = None
) -> Iterator[RelayProcess]:
    """A relay in a process of its own for the block (it shares no interpreter with the caller);
    `place` runs in it before it execs (dbladder.roles: the service role's CPUs and cgroup, since
    the relay stands for the service's network path)."""
    command = [
        sys.executable,
        "-m",
        "dbladder.transport.background",
        str(target),
        "--delay-ms",
        str(delay_ms),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=place
    )
    assert process.stdout is not None
    first = process.stdout.readline()  # "listening HOST PORT", or nothing if it failed
    parts = first.split()
    if len(parts) != 3 or parts[0] != "listening":
        process.kill()
        _, err = process.communicate(timeout=STOP_TIMEOUT)
        raise RelayFailed(f"the relay to {target} did not start: {(err or first).strip()}")
    running = RelayProcess((parts[1], int(parts[2])), process)
    try:
        yield running
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            out, _ = process.communicate(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            out, _ = process.communicate()
        for line in out.splitlines():
            if line.startswith("stats "):
                running.stats = RelayStats(**json.loads(line[len("stats ") :]))


async def _serve(target: RelayTarget, delay_ms: float) -> RelayStats:
    relay = Relay(target, delay_ms)
    host, port = await relay.start()
    print(f"listening {host} {port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await relay.stop()
    return relay.stats


def main(argv: list[str] | None = None) -> int:
    """`python -m dbladder.transport.background TARGET --delay-ms MS`: relay until SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m dbladder.transport.background", description=__doc__)
    parser.add_argument("target", help="host:port, or the path of a Unix socket")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="added to each chunk, each way")
    args = parser.parse_args(argv)
    try:
        target = RelayTarget.parse(args.target)
        loop = precise_loop()
        try:
            stats = loop.run_until_complete(_serve(target, args.delay_ms))
        finally:
            loop.close()
    except DbladderError as exc:
        print(exc, file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"the relay cannot listen: {exc}", file=sys.stderr)
        return 1
    print("stats " + json.dumps(stats.to_dict()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
