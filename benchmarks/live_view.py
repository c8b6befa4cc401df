"""What the live dashboard costs a run: the live view a generator process makes twice a second,
the parent's merge, and the dashboard's fold of it, each as a share of one core.

    python benchmarks/live_view.py [--rate 1000] [--seconds 10]

A level at `--rate` req/s is filled for `--seconds` (log-normal latencies around 3 ms, the shop's
four operations) and the live view of its last second timed: the figures every run's progress
line needs (p95 and the counts, the reference) and the whole view with the dashboard's figures
(p50, p99, the last two whole seconds, each operation's counts and percentiles). The process
makes one every half second (load/fleet/child.py); the parent merges one a second
(load/fleet/parent.py) and, with --dashboard, folds it into the page's document and writes that
as JSON once (dashboard/state.py).
"""

from __future__ import annotations

import argparse
import random
import timeit

from dbladder.dashboard import DashboardState
from dbladder.load.live_view import _merged_operations, _merged_seconds, live_view
from dbladder.load.recorder import Recorder
from dbladder.plans import Ladder

OPERATIONS = ("product", "page", "order", "create")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    random.seed(1)
    levels = Ladder(args.rate, 0, 1, args.seconds + 1.0, warmup=1.0).levels()
    recorder = Recorder(levels, operations=OPERATIONS)
    record = recorder.levels[0]
    for i in range(args.rate * args.seconds):
        value = int(random.lognormvariate(8, 1))
        record.from_due.record(value)
        record.lag.record(50)
        record.operations[i % len(OPERATIONS)].from_due.record(value)
        record.operations[i % len(OPERATIONS)].outcomes["2xx"] += 1
        record.seconds[i // args.rate].latency.record(value)
        record.seconds[i // args.rate].sent += 1
    at = levels[0].measured_from + args.seconds - 0.4
    number = 1000

    def reference() -> tuple[int, float, int]:
        return record.lag.count, record.from_due.percentile(95) / 1000, record.failures

    base = timeit.timeit(reference, number=number) / number
    view_cost = timeit.timeit(lambda: live_view(recorder, 0, at).to_dict(), number=number) / number
    view = live_view(recorder, 0, at)
    payload = view.to_dict()
    merge = (
        timeit.timeit(
            lambda: (_merged_seconds([payload["seconds"]]), _merged_operations([payload["operations"]])),
            number=number,
        )
        / number
    )
    state = DashboardState("benchmark")
    fold = timeit.timeit(lambda: (state.live(view), state.text()), number=200) / 200
    print(f"a level at {args.rate} req/s, {args.seconds} s measured, {len(OPERATIONS)} operations")
    print(f"live view, reference figures: {base * 1e6:7.0f} us, x2 a second: {2 * base:.3%} of a core")
    print(
        f"live view, dashboard figures: {view_cost * 1e6:7.0f} us, x2 a second: {2 * view_cost:.3%} of a core"
    )
    print(f"  ratio to the reference: {view_cost / base:.1f}")
    print(f"parent: merge one view {merge * 1e6:.0f} us a second ({merge:.3%} of a core)")
    print(f"parent, --dashboard: fold and JSON {fold * 1e6:.0f} us a second ({fold:.3%} of a core)")


if __name__ == "__main__":
    main()
