"""Before the first level: the warm-up, as a person warms an app before measuring it, and the
search's start calibrated on the warm app (`calibrated`, dbladder.load.calibration).

A real app's first request of each page is not what the page costs: it compiles templates, fills
the framework's caches, makes image renditions, reads its rows from disk into the page cache. A
search whose first probe meets that reads the cold start as the ceiling (issue 31: a Django site
of ~70 req/s read 8 req/s). So before the first level, on one keep-alive connection, one request
at a time (the lowest rate there is: the app is never asked for two things at once):

  1. first hits: every request of the mix sent once, and a request with a `Param.rows` parameter
     in its path or query once for each distinct value of it, up to `rows_bound` of them (all of
     them for a few hundred rows: each page's own first hit);
  2. settling: each request sent again and again until its latency has settled, its median over
     the last `window` answers within `tolerance` (15 %) of the median of the `window` before
     (or within `floor_ms`, below which loopback's jitter decides, not the app); a settled
     request is not sent again, nor one still unsettled after `max_windows` windows (a page
     whose latency varies by itself would otherwise hold the warm-up to its time limit);

all within `limit_s` seconds (`--app-warmup`); what is not done by then is recorded as such and
the run goes on. The record (`WarmUp.to_json`, the result's `warmup`) says how long it took and,
per request, its first-hit latency against the settled one ("bread: first 612 ms, settled 18 ms").

The same runs before dbladder's own service where a first hit is cold (a fresh database after a
restore: `RunConfig.warm_up_s`); the service's published rounds run without it, as they were taken.
The warm-up's writes are the app's to keep, as a person's clicks would be: they are not
acknowledged writes of any level, and the integrity check looks only for those.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..app.templates import template_names
from ..app.workload import AppWorkload
from ..load.calibration import CalibrationRule, calibrate
from ..load.mix import Request, requests
from ..load.targets.http import ConnectionPool, RequestRenderer
from ..report.warm_up import calibration_words, warm_up_lines
from ..result.context import CalibrationRecord, WarmUpRecord
from ..workloads.base import Draw, Mix, Workload
from ..workloads.registry import load_workload
from .progress import Progress

if TYPE_CHECKING:
    from .config import RunConfig
    from .document import Run
    from .load_target import LoadTarget
    from .preparation import Prepared

DEFAULT_APP_WARMUP_S = 120.0
"""`--app-warmup`'s default: long enough for a few hundred pages' first hits at a few hundred ms."""

ROWS_BOUND = 500
WINDOW = 10
TOLERANCE = 0.15
FLOOR_MS = 0.5
MAX_WINDOWS = 10  # a request that has not settled in 10 windows (100 answers) is not sent again
REQUEST_TIMEOUT_S = 30.0  # a first hit may make every rendition of a page: longer than a level's timeout
PROGRESS_EVERY_S = 2.0

SETTLED, TIME_LIMIT, ANSWER_LIMIT = "settled", "time limit", "answer limit"
CALIBRATION_STREAM = 1_000_000  # a stream of the mix no generator process draws


@dataclass(frozen=True)
class WarmUpRule:
    """How long the warm-up may take and when a request's latency counts as settled."""

    limit_s: float
    rows_bound: int = ROWS_BOUND
    window: int = WINDOW
    tolerance: float = TOLERANCE
    floor_ms: float = FLOOR_MS
    max_windows: int = MAX_WINDOWS
    timeout_s: float = REQUEST_TIMEOUT_S

    def words(self) -> str:
        return (
            f"its median over the last {self.window} answers within {100 * self.tolerance:g} % "
            f"(or {self.floor_ms:g} ms) of the {self.window} before"
        )


@dataclass
class _Tally:
    """One request's answers during the warm-up, in ms."""

    name: str
    first: list[float] = field(default_factory=list)
    later: list[float] = field(default_factory=list)
    failed: int = 0
    settled: bool = False

    def check(self, rule: WarmUpRule) -> bool:
        """Whether its last window's median is within the rule of the window before's."""
        window = rule.window
        if len(self.later) >= 2 * window:
            last = statistics.median(self.later[-window:])
            before = statistics.median(self.later[-2 * window : -window])
            self.settled = abs(last - before) <= max(rule.tolerance * before, rule.floor_ms)
        return self.settled

    def to_json(self, window: int) -> dict[str, Any]:
        first = self.first
        return {
            "request": self.name,
            "first_hits": len(first),
            "first_ms": _ms(statistics.median(first)) if first else None,
            "first_max_ms": _ms(max(first)) if first else None,
            "settled_ms": _ms(statistics.median(self.later[-window:])) if self.later else None,
            "answers": len(first) + len(self.later),
            "failed": self.failed,
            "settled": self.settled,
        }


def _ms(value: float) -> float:
    return round(value, 2)


def first_hits(workload: Workload, sizes: Mapping[str, int], bound: int, seed: int = 1) -> list[Request]:
    """Every operation of the workload once, and for the user's app each distinct value of a
    `Param.rows` parameter of a request's path or query once more, up to `bound` values each:
    (operation index, args) in the workload's order, the other parameters drawn as the load would."""
    draw = Draw(random.Random(f"dbladder.warm-up:{seed}").random)
    hits: list[Request] = []
    for index, operation in enumerate(workload.operations):
        values = _row_values(workload, index, bound)
        count = max((len(found) for found in values.values()), default=1)
        for k in range(count):
            args = list(operation.draw(draw, sizes))
            for position, found in values.items():
                args[position] = found[k % len(found)]
            hits.append((index, tuple(args)))
    return hits


def _row_values(workload: Workload, index: int, bound: int) -> dict[int, list[Any]]:
    """The app's request `index`: {position in its args: the distinct values to visit} of each
    `Param.rows` named in its path or query (a form's value does not make a page of its own)."""
    if not isinstance(workload, AppWorkload):
        return {}
    request = workload.declared.requests[index]
    named = set().union(*(template_names(text) for text in (request.path, *request.query.values())))
    found = {}
    for position, (name, param) in enumerate(request.params.items(), start=1):  # args[0]: the session
        if param.kind == "rows" and name in named:
            found[position] = list(dict.fromkeys(workload.rows.get(param.sql, ())))[:bound]
    return {position: values for position, values in found.items() if values}


@dataclass
class WarmUp:
    """The warm-up as it ran: its rule, how long it took, and each request's tally."""

    rule: WarmUpRule
    tallies: list[_Tally]
    seconds: float = 0.0
    sent: int = 0
    first_hits: int = 0
    stopped_because: str = SETTLED

    def to_json(self) -> dict[str, Any]:
        """The result's `warmup` block."""
        return {
            "seconds": round(self.seconds, 2),
            "limit_s": self.rule.limit_s,
            "requests": self.sent,
            "first_hits": self.first_hits,
            "stopped_because": self.stopped_because,
            "settled": all(tally.settled for tally in self.tallies),
            "rule": self.rule.words(),
            "answer_limit": self.rule.max_windows * self.rule.window,
            "by_request": [tally.to_json(self.rule.window) for tally in self.tallies],
        }


Judge = Callable[[int, int], bool]
"""judge(operation index, status): whether the answer is the request's success."""


async def warm_up(
    host: str,
    port: int,
    workload: Workload,
    sizes: Mapping[str, int],
    rule: WarmUpRule,
    judge: Judge,
    progress: Progress,
    seed: int = 1,
) -> WarmUp:
    """Warm the service at host:port with the workload's requests (see the module notes)."""
    render = workload.http_renderer(f"{host}:{port}") or RequestRenderer(f"{host}:{port}", workload)
    tallies = [_Tally(operation.name) for operation in workload.operations]
    hits = first_hits(workload, sizes, rule.rows_bound, seed)
    record = WarmUp(rule, tallies, first_hits=len(hits))
    began = time.monotonic()
    deadline = began + rule.limit_s
    shown = began
    pool = ConnectionPool(host, port, 1, rule.timeout_s)

    async def send(request: Request, first: bool) -> bool:
        """One request, timed into its tally; False when the time limit has come."""
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        index = request[0]
        at = time.perf_counter()
        try:
            answer = await asyncio.wait_for(pool.request(render(request), keep_body=False), left)
        except TimeoutError:
            return False
        took = 1000 * (time.perf_counter() - at)
        tally = tallies[index]
        (tally.first if first else tally.later).append(took)
        tally.failed += not (answer.cause is None and judge(index, answer.status))
        record.sent += 1
        return True

    def show(words: str) -> None:
        nonlocal shown
        if time.monotonic() - shown >= PROGRESS_EVERY_S:
            shown = time.monotonic()
            progress.message(f"warming up, {shown - began:.0f} s: {words}")

    progress.message(
        f"warming up the app: {len(hits):,} first hits ({len(tallies)} request(s)), then each request "
        f"until it settles ({rule.words()}), one at a time, within {rule.limit_s:g} s"
    )
    draw = Draw(random.Random(f"dbladder.warm-up.settle:{seed}").random)
    try:
        complete = True
        for done, hit in enumerate(hits, start=1):
            if not (complete := await send(hit, first=True)):
                break
            show(f"{done:,} of {len(hits):,} first hits")
        while complete:
            unsettled = [i for i, tally in enumerate(tallies) if not tally.check(rule)]
            waiting = [i for i in unsettled if len(tallies[i].later) < rule.max_windows * rule.window]
            if not waiting:
                break
            for index in waiting:
                args = workload.operations[index].draw(draw, sizes)
                if not (complete := await send((index, args), first=False)):
                    break
            show(f"{len(tallies) - len(waiting)} of {len(tallies)} request(s) settled, {record.sent:,} sent")
        settled = all(tally.settled for tally in tallies)
        record.stopped_because = TIME_LIMIT if not complete else SETTLED if settled else ANSWER_LIMIT
    finally:
        pool.close()
    record.seconds = time.monotonic() - began
    for line in warm_up_lines(WarmUpRecord.from_json(record.to_json())):
        progress.message(line)
    return record


ExitCheck = Callable[[str, bool], None]
"""check(during, answers_failed): raises when the target exited during `during` (the warm-up,
the calibration), some of whose answers failed or not: the user's app dbladder started
(AppExited); nothing for a target that is not asked."""


def no_exit_check(during: str, answers_failed: bool = False) -> None:
    """The exit check of a target that is not asked (dbladder's service, one already running)."""


def target_workload(target: LoadTarget, workload: Workload) -> Workload:
    """The workload as the load target takes it: the app's with its sessions and rows (the state
    its generator processes load), else the round's own."""
    return load_workload(target.workload) if target.workload is not None else workload


def judge_of(workload: Workload) -> Judge:
    """Success by the request's own statuses for the app (a 302 that is its success), else below 400."""
    if isinstance(workload, AppWorkload):
        success = [frozenset(request.success) for request in workload.declared.requests]
        return lambda index, status: status in success[index]
    return lambda index, status: 0 < status < 400


def before_the_load(
    config: RunConfig,
    run: Run,
    target: LoadTarget,
    workload: Workload,
    prepared: Prepared,
    progress: Progress,
    check_exit: ExitCheck = no_exit_check,
) -> RunConfig:
    """Before the first level: the target warmed (`warm_up_target`, the run's `warmup`) and the
    search's start calibrated on it (`calibrated`); the config the rest of the round goes by.
    `check_exit` is asked after each (a target that exited stops the round here)."""
    sizes = prepared.data.sizes
    if (warmed := warm_up_target(config, target, workload, sizes, progress, check_exit)) is not None:
        run.update(warmup=WarmUpRecord.from_json(warmed))
    return calibrated(config, run, target, workload, prepared.mix, sizes, progress, check_exit)


def warm_up_target(
    config: RunConfig,
    target: LoadTarget,
    workload: Workload,
    sizes: Mapping[str, int],
    progress: Progress,
    check_exit: ExitCheck = no_exit_check,
) -> dict[str, Any] | None:
    """The round's warm-up (`config.warm_up_s` seconds at most; none when it is None or the load
    goes straight to the engine): the result's `warmup` block, or None."""
    if config.warm_up_s is None or not target.host:
        return None
    sent = target_workload(target, workload)
    rule = WarmUpRule(config.warm_up_s)
    record = asyncio.run(
        warm_up(target.host, target.port, sent, sizes, rule, judge_of(sent), progress, config.mix_seed)
    )
    check_exit("the warm-up", any(tally.failed for tally in record.tallies))
    return record.to_json()


def calibrated(
    config: RunConfig,
    run: Run,
    target: LoadTarget,
    workload: Workload,
    mix: Mix,
    sizes: Mapping[str, int],
    progress: Progress,
    check_exit: ExitCheck = no_exit_check,
) -> RunConfig:
    """The round's config with the search's start calibrated on the warm service
    (dbladder.load.calibration) when `config.calibrate` asks for it, recorded in the run's
    `search.calibration`; else the config as it is."""
    plan = config.plan
    rates = plan.start_range()
    if not config.calibrate or rates is None or not target.host:
        return config
    start, min_rate, max_rate = rates
    sent = target_workload(target, workload)
    host = f"{target.host}:{target.port}"
    render = sent.http_renderer(host) or RequestRenderer(host, sent)
    stream = requests(sent, mix, sizes, seed=config.mix_seed, stream=CALIBRATION_STREAM)
    progress.message("calibrating the search's start on the app: one connection, then closed loops")
    found = asyncio.run(
        calibrate(target.host, target.port, stream, render, judge_of(sent), start, min_rate, max_rate,
                  CalibrationRule(timeout_s=config.timeout))
    )  # fmt: skip
    check_exit("the calibration", found.failed > 0)
    record = found.to_json()
    progress.message(calibration_words(CalibrationRecord.from_json(record)) or "")
    config = replace(config, plan=plan.started_at(found.start_rps, record))
    run.replan(config)
    return config
