"""What the benchmarks' bare clients share: one request of the shop's read mix straight on asyncpg's
protocol, a task held until it ends, how long a process ran and waited for a CPU, and a client run
in a fresh process of its own (`from bare_client import ...`, as the benchmarks run from this
folder)."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


async def read_on_protocol(protocol: Any, states: tuple[Any, Any, Any, Any], kind: str, args: Any) -> None:
    """Run one read of the mix (`kind` product, page or order) on an asyncpg connection's protocol,
    as the engine's sessions call it: `states` are the prepared statements' `_state` for the
    product, the page, the order and its items."""
    product, page, order, items = states
    if kind == "product":
        await protocol.bind_execute(product, args, "", 1, True, None)
    elif kind == "page":
        await protocol.bind_execute(page, args, "", 0, True, None)
    elif (await protocol.bind_execute(order, args, "", 1, True, None))[0]:
        await protocol.bind_execute(items, args, "", 0, True, None)


_tasks: set[asyncio.Task[None]] = set()


def keep(task: asyncio.Task[None]) -> None:
    """Hold a task until it ends (the loop keeps only a weak reference), as DirectTarget does."""
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


def schedstat() -> tuple[float, float]:
    """Seconds this process has run on a CPU and waited, runnable, for one (Linux's schedstat)."""
    on_cpu, waiting, _ = Path("/proc/self/schedstat").read_text().split()
    return int(on_cpu) / 1e9, int(waiting) / 1e9


class ProcessCost:
    """CPU seconds, seconds on a CPU and seconds waiting for one, of this process between `start()`
    and `stop()`."""

    def start(self) -> None:
        self._cpu = time.process_time()
        self._on_cpu, self._waiting = schedstat()

    def stop(self) -> tuple[float, float, float]:
        on_cpu, waiting = schedstat()
        return time.process_time() - self._cpu, on_cpu - self._on_cpu, waiting - self._waiting


def in_child(target: Callable[..., None], *args: Any, timeout: float) -> Any:
    """Run `target(*args, out)` in a fresh spawned process; what it put on the queue `out`."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    child = context.Process(target=target, args=(*args, out))
    child.start()
    result = out.get(timeout=timeout)
    child.join()
    return result


async def measured(loops: Sequence[asyncio.Future[None]], start: float) -> tuple[float, float, float, float]:
    """Wait for `start` (a time.perf_counter() value), then for every loop; the span's wall seconds,
    CPU seconds, seconds on a CPU and seconds waiting for one."""
    await asyncio.sleep(start - time.perf_counter())
    cost = ProcessCost()
    cost.start()
    await asyncio.gather(*loops)
    wall = time.perf_counter() - start
    return (wall, *cost.stop())
