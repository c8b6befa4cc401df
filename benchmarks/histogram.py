"""How fast is Histogram.record()? Run: python benchmarks/histogram.py [--values N] [--repeats R]

record() runs once per request in the load generator, so it has to cost about as little as the
cheapest thing Python can do with a value. The reference, measured in the same run on the same
values, is appending to a list; the ratio says how many appends one record() costs. The values
are log-normal latencies around 1 ms with a heavy tail, so every branch of record() is taken.
Each figure is the best of several repeats, the usual way to read through machine noise.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Callable

from dbladder.histogram import Histogram


def latencies(n: int, seed: int = 1) -> list[int]:
    rng = random.Random(seed)
    return [int(rng.lognormvariate(7.0, 1.2)) for _ in range(n)]


def best_seconds(run: Callable[[], None], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=1_000_000, help="values per repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats; the best is reported")
    options = parser.parse_args()
    values = latencies(options.values)

    def record_all() -> None:
        record = Histogram().record
        for value in values:
            record(value)

    def append_all() -> None:
        sink: list[int] = []
        append = sink.append
        for value in values:
            append(value)

    record_seconds = best_seconds(record_all, options.repeats)
    append_seconds = best_seconds(append_all, options.repeats)
    n = len(values)
    python = f"Python {platform.python_version()} on {platform.machine()}"
    print(f"{python}, {n:,} values, best of {options.repeats}")
    print(f"Histogram.record : {n / record_seconds:>12,.0f} calls/s  {record_seconds / n * 1e9:6.1f} ns/call")
    print(f"list.append      : {n / append_seconds:>12,.0f} calls/s  {append_seconds / n * 1e9:6.1f} ns/call")
    print(f"ratio            : {record_seconds / append_seconds:.1f}x the cost of list.append")


if __name__ == "__main__":
    main()
