"""The known-answer tests' rounds, with each figure printed beside its paper answer.

    .venv/bin/python benchmarks/known_answers.py [--only fifo,search,...] [--json FILE]
    /other/checkout/.venv/bin/python benchmarks/known_answers.py     # that checkout's dbladder

The tests (tests/run/test_known_answers.py, tests/load/test_users.py, test_overload.py,
tests/transport/test_relay.py) drive servers whose right figures are worked out on paper
(tests/known_servers.py) and assert each figure within a tolerance; a passing test hides how close
it came. This runs the same rounds through the library and prints the figures themselves, so two
checkouts (for example before and after a redesign) can be compared figure by figure. The rounds'
servers and helpers come from the `tests/` folder beside whichever `dbladder` is imported, so each
checkout is measured with its own; the two shapes of `RunConfig` (a plan field, or the older
`ladder` / `search` fields) are both accepted.

Rounds (names for --only): fifo (a ladder against a fifo server of capacity 500/s), errors (one
request in 50 a 503), stall400 and stall200 (100 ms stalls every second at 400 req/s for 4 s, the
test's round before issue 21's time, and at 200 req/s for 8 s, after), timeouts (500 ms stalls
every 2 s with a 250 ms timeout), search (the ceiling search against capacity 400/s), users (100
users thinking 0.5 s on average), overload (ten times a fifo server's capacity, then half of it)
and relay (2 ms added each way in front of PostgreSQL: needs the server at
DBLADDER_TEST_POSTGRES_URL, default postgresql://postgres@127.0.0.1:5432/test, and only reads).
About two minutes for all of them; the load average is printed first and last.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dbladder

CHECKOUT = Path(dbladder.__file__).resolve().parents[1]
for folder in ("tests", "tests/load", "tests/transport"):
    sys.path.insert(0, str(CHECKOUT / folder))

from known_servers import known_server  # noqa: E402  (from the checkout measured, found above)

from dbladder.plans import Ladder  # noqa: E402

SMALL = {"products": 2000, "orders": 5000}
Figure = tuple[str, float | str | None, str, str]  # name, measured, paper answer, the test's bound


def run_known(url: str, plan: Any, **changes: Any) -> dict[str, Any]:
    """A round against `url` as tests/run/test_known_answers.py runs it, on either config shape and
    by either name of the round's function (`run_round`, before it `run_ladder`)."""
    try:
        from dbladder.run.config import RunConfig  # after issue 21: one plan field

        plan_fields: dict[str, Any] = {"plan": plan}
    except ImportError:
        from dbladder.run.round import RunConfig  # type: ignore[no-redef]  # before: ladder or search

        plan_fields = {"ladder": plan} if isinstance(plan, Ladder) else {"ladder": None, "search": plan}
    from dbladder.run import round as one_round

    with tempfile.TemporaryDirectory() as folder:
        config = RunConfig(
            db_url=f"sqlite:///{folder}/shop.db",
            sizes=SMALL,
            service_url=url,
            out_dir=Path(folder),
            continue_after_fail=True,
            **plan_fields,
        )
        run = getattr(one_round, "run_round", None) or one_round.run_ladder
        result = run(dataclasses.replace(config, **changes))
        return result.to_json() if hasattr(result, "to_json") else dict(result)


def search_plan() -> Any:
    try:
        from dbladder.plans import Search
    except ImportError:
        from dbladder.load.search import Search  # type: ignore[no-redef]
    return Search(start=150, hold=2.5, warmup=0.5, settle=0.5, budget=60)


def fifo() -> list[Figure]:
    with known_server("fifo", service_ms=2.0) as server:
        result = run_known(server.url, Ladder(250, 150, 4, 3.0, warmup=1.0))
    figures: list[Figure] = []
    for level in result["levels"]:
        rate = level["offered_rps"]
        below = rate < server.capacity
        figures += [
            (
                f"{rate:.0f}/s achieved",
                level["achieved_rps"],
                f"{min(rate, 500):.0f}",
                "+-3 %" if below else "450-510",
            ),
            (f"{rate:.0f}/s sent", level["sent_rps"], f"{rate:.0f}", "+-3 %"),
        ]
        if below:
            figures.append((f"{rate:.0f}/s p50 ms", level["p50_ms"], "2", "1.9-6"))
        figures.append((f"{rate:.0f}/s passed", str(level["passed"]), str(below), "same"))
    figures += [
        ("ceiling", result["ceiling_rps"], "400", "exactly"),
        ("peak", result["peak_rps"], "500", "<= 510"),
    ]
    return figures


def errors() -> list[Figure]:
    with known_server("errors", every=50) as server:
        result = run_known(server.url, Ladder(300, 0, 1, 3.0, warmup=1.0), timeout=1.0)
    (level,) = result["levels"]
    return [
        ("fail %", level["fail_pct"], "2.0", "+-0.1"),
        ("p99 ms", level["p99_ms"], "1000 (the timeout)", "990-1010"),
        ("max ms", level["max_ms"], "1000", "990-1010"),
        ("p95 ms", level["p95_ms"], "~0", "< 20"),
        ("answered p99 ms", level["answered"]["p99_ms"], "~0", "< 20"),
        ("failed-after max ms", level["failed_after"]["max_ms"], "~0", "< 20"),
        ("achieved", level["achieved_rps"], "294", "+-9"),
    ]


def stall(rate: int, hold: float) -> Callable[[], list[Figure]]:
    def measure() -> list[Figure]:
        with known_server("stall", period_s=1.0, stall_s=0.1) as server:
            result = run_known(server.url, Ladder(rate, 0, 1, hold, warmup=1.0))
        (level,) = result["levels"]
        return [
            ("fail %", level["fail_pct"], "0", "exactly"),
            ("p95 ms", level["p95_ms"], "50", "44-56"),
            ("p99 ms", level["p99_ms"], "90", "84-96"),
            ("max ms", level["max_ms"], "100", "95-110"),
        ]

    return measure


def timeouts() -> list[Figure]:
    with known_server("stall", period_s=2.0, stall_s=0.5) as server:
        result = run_known(server.url, Ladder(200, 0, 1, 5.0, warmup=1.0), timeout=0.25)
    (level,) = result["levels"]
    return [
        ("fail %", level["fail_pct"], "12.5", "+-1.5"),
        ("p95 ms", level["p95_ms"], "250 (the timeout)", "245-255"),
        ("p99 ms", level["p99_ms"], "250", "245-255"),
        ("answered p99 ms", level["answered"]["p99_ms"], "< 250", "< 250"),
        ("failed-after p50 ms", level["failed_after"]["p50_ms"], "250", "245-300"),
    ]


def search() -> list[Figure]:
    with known_server("fifo", service_ms=2.5) as server:
        result = run_known(server.url, search_plan(), continue_after_fail=False)
    probes = result["levels"]
    return [
        ("ceiling", result["ceiling_rps"], "400", "380-420"),
        (
            "first probes",
            ",".join(f"{level['offered_rps']:.0f}" for level in probes[:3]),
            "150,300,600",
            "same",
        ),
        ("probes", len(probes), "-", "-"),
        ("stopped because", result["search"]["stopped_because"], "found", "same"),
        (
            "failed / held",
            result["search"]["failed_rps"] / result["search"]["held_rps"],
            "<= 1.05",
            "<= 1.05",
        ),
        ("largest achieved", max(level["achieved_rps"] for level in probes), "<= 400", "<= 408"),
    ]


def users() -> list[Figure]:
    from test_http_client import ScriptedServer
    from test_http_client import run as run_loop
    from test_users import make_generator

    from dbladder.histogram import Histogram
    from dbladder.plans import Phase, UserPlan
    from dbladder.result.level_rows import level_row
    from dbladder.result.passmark import PassMark

    plan = UserPlan((Phase(100, 0.5, 2.5),))

    async def main() -> dict[str, Any]:
        async with ScriptedServer() as server:
            generator = make_generator(plan, server.port)
            await generator.run()
            return generator.recorder.snapshot()

    (level,) = run_loop(main)["levels"]
    latency = Histogram.from_dict(level["latency_from_due"]).mean / 1_000_000
    achieved = level_row(level, PassMark())["achieved_rps"]
    return [
        (
            "achieved / (users / (think + latency))",
            achieved / (100 / (plan.think_mean + latency)),
            "1",
            "+-10 %",
        ),
        ("rate", level["rate"], "1000", "exactly"),
    ]


def overload() -> list[Figure]:
    from test_overload import IN_FLIGHT, SERVICE_MS, climb

    with known_server("fifo", service_ms=SERVICE_MS) as server:
        overloaded, memory = climb(server.port, 10 * server.capacity, hold=3.0)
        after, _ = climb(server.port, 0.5 * server.capacity, hold=2.0, warmup=0.5)
    (pid,) = memory.peak
    most = server.capacity * (3.0 + IN_FLIGHT * SERVICE_MS / 1000)
    return [
        ("requests", overloaded["requests"], "7500", "exactly"),
        ("responses", overloaded["responses"], f"<= {most:.0f}", f"<= {1.05 * most:.0f}"),
        ("dropped share", overloaded["failures"]["dropped"] / overloaded["requests"], "> 0.5", "> 0.5"),
        ("generator growth MB", (memory.peak[pid] - memory.first[pid]) / 2**20, "small", "< 40"),
        ("next level fail %", after["fail_pct"], "0", "exactly"),
    ]


def relay() -> list[Figure]:
    from test_relay import round_trip_seconds

    from dbladder.transport import relay_process, relay_target, through_relay
    from dbladder.urls import parse_url

    raw = os.environ.get("DBLADDER_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
    url = parse_url(raw)
    with relay_process(relay_target(url), delay_ms=2) as running:
        direct = statistics.median(asyncio.run(round_trip_seconds(raw)))
        relayed = statistics.median(asyncio.run(round_trip_seconds(through_relay(url, running.address).raw)))
    return [("added ms a round trip", (relayed - direct) * 1000, ">= 4", "4-8")]


ROUNDS: dict[str, Callable[[], list[Figure]]] = {
    "fifo": fifo,
    "errors": errors,
    "stall400": stall(400, 4.0),
    "stall200": stall(200, 8.0),
    "timeouts": timeouts,
    "search": search,
    "users": users,
    "overload": overload,
    "relay": relay,
}


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", help=f"comma-separated rounds of {','.join(ROUNDS)}")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(ROUNDS)
    unknown = [name for name in names if name not in ROUNDS]
    if unknown:
        raise SystemExit(f"no round called {', '.join(unknown)}: choose from {', '.join(ROUNDS)}")
    commit = subprocess.run(
        ["git", "-C", str(CHECKOUT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"dbladder from {CHECKOUT} at {commit}; load average {load_average()}")
    document: dict[str, Any] = {"checkout": str(CHECKOUT), "commit": commit, "load_before": os.getloadavg()}
    for name in names:
        figures = ROUNDS[name]()
        document[name] = {figure[0]: figure[1] for figure in figures}
        print(f"\n{name} (load {load_average()})")
        print(f"  {'figure':<40} {'measured':>12} {'paper':>18} {'test bound':>12}")
        for label, value, paper, bound in figures:
            shown = f"{value:.3f}" if isinstance(value, float) else str(value)
            print(f"  {label:<40} {shown:>12} {paper:>18} {bound:>12}")
    document["load_after"] = os.getloadavg()
    print(f"\nload average {load_average()}")
    if args.json:
        args.json.write_text(json.dumps(document, indent=1))


if __name__ == "__main__":
    main()
