"""Why a level failed: one cause, with the figures that show it, or "cannot tell" with the closest.

A pure function of what a level already measured (issue 22): its seconds (`Second`: sent,
answered, failed, p95 and max of each second, and its length: a window's last part-second is
shorter) and its resources over the level (`Resources`, `resources.py`: CPU per role and per
process against what it may use, where each event loop's time went, pool wait, the single SQLite
writer's queue and commits beside the disk's fsync rate, lock waits, iowait, the generator's
schedule lag and drops); `run/diagnose.py` wires it into the run. The order of the questions,
and why:

1. Did every second pass? Then the level passed.
1b. Were the failures answers? When most failed requests were answered, quickly, with a status
   the request does not count as a success (4xx, 5xx, or `unexpected`: a redirect where a page was
   wanted, the login page) and they are more than the pass mark allows, the level failed on what
   the app or service said, not on how fast: "errors", with each kind's count. This comes first
   because such answers come at any rate (a missing `X-Forwarded-Proto` header answered with a
   redirect to https at 2 req/s as at 500), so no resource or stall explains them.
2. Did the generator keep its schedule? If it fell behind (schedule lag p99 above 2 ms, the flag
   the level already carries, and at least half the pass mark's p95, so that the lag alone could
   have failed the level), dropped requests, ran out of CPU or sent less than offered, the
   system under test was not given the load: "generator", whatever else the figures say. Drops
   with every connection busy (and the sends they cut short) count only when the server answered
   what it was sent within the mark (p95 from the send): a slow server keeps them busy itself.
3. Is it a stall, or several? Most seconds passed (the failing ones at most STALL_MOST_SECONDS of
   the level, each run counted a second short: a stall across a second's boundary fails the seconds
   on both sides, so a 1 s stall fails two, a third of a 6 s level), and each run of failing seconds
   has a stall's shape in its latencies: its longest wait in its first second, every later second
   waiting until the same end (`stall_location`, which works it through), wherever it falls: at the
   window's start, at its end (still stalled when the window ended, or ended in its last second, the
   catch-up second), across a second's boundary. A result that kept no max per second is read by its
   counts of answers, one run with a passing second (or the catch-up second) after it.
   What the run's other samples saw in [s, s + L] is named beside it when it stood out against
   the rest of the level (`stall_events`: a checkpoint, CPU steal, iowait, lock waits, a role's
   CPU, the generator's schedule lag); nothing is said when nothing did.
   A FIFO server above its capacity fails nearly every second, with its latency climbing: not one
   run of a few seconds, so never a stall.
4. Saturation: more than STALL_MOST_SECONDS of the seconds failed, and the answers fell short of
   the sends, or more than 5 % of the sends failed (a backlog already at the timeout), or the
   latency climbed through the level, or a resource is past its bound: offered about its
   capacity, a server's queue comes and goes (a CPU-bound service answered what it was sent, its
   p95 neither climbing nor at the timeout, with 1.04 cores of its 1 wanted), and that is its
   limit reached, not a level that cannot be told. Which resource ran out is the one furthest
   past its bound (`resources.py`, which also says how a role's CPU, its processes' and the
   machine's are judged); none past its bound is said so, with each one's figure and bound.
5. Anything else (failures scattered over the level, a backlog that built up and cleared in a few
   seconds): "cannot tell", with every measured resource's figure and its bound.

The closed model (`Users`: a phase of users who each wait for their answer before thinking and
sending again) cannot build a backlog: a slower answer means fewer requests, so the answers keep
up with the sends and the latency settles rather than climbs. Its offered rate is users / think
time, what they would send were every answer instant, so sending less than that is no sign of
the generator. Saturation there is the throughput flat while the users grew, with the response
time rising: against the phase before it, the answers per second grew by less than
CLOSED_FLAT_GROWTH of the users' growth and the p95 rose. The first phase has none before it:
most of its seconds failing is saturation only when a resource is past its bound (a steadily slow
answer is not saturation), else "cannot tell".
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .resource_words import evidence_of, finding_line, ruled_out
from .resources import CPU_AT_LIMIT, ProcessShare, Resources, RoleCpu, findings, named
from .stall_events import Moment, stall_clause, stall_events
from .stall_location import Stall, catches_up, located_by_counts, located_by_latencies, steady_rate

__all__ = ["Diagnosis", "ProcessShare", "Resources", "RoleCpu", "Second", "Users", "diagnose"]

ANSWERED_FAILURES = ("unexpected", "4xx", "5xx")
"""Failed requests that were answered: the failure is in the answer, not its time."""
ANSWER_WORDS = {"unexpected": "a status outside the request's success", "4xx": "4xx", "5xx": "5xx"}
STALL_MOST_SECONDS = 0.3  # a stall fails at most this share of the level's seconds
SHORT_ANSWERS = 0.95  # answers below this share of the sends: the backlog grew
CLIMB = 2.0  # p95 in the last third of the level at least this multiple of the first third's
SCHEDULE_LAG_P99_MS = 2.0  # as the "generator fell behind" flag
LAG_SHARE_OF_MARK = 0.5  # and a lag that big beside the pass mark's p95: enough to fail it by itself
SENT_SHORT = 0.95  # sent below this share of the offered rate: the generator did not send it
CLOSED_FLAT_GROWTH = 0.5  # closed model: answers grew by less than this share of the users' growth


@dataclass(frozen=True)
class Second:
    """One second of a level: requests sent in it, answers that arrived in it, requests due in it
    that failed, the p95 (and max, when known) in ms of the latency from due of those due in it,
    and its length (1 but for a window's last part-second: its counts are that part's)."""

    sent: int
    answered: int
    failed: int
    p95_ms: float | None
    max_ms: float | None = None
    length: float = 1.0


@dataclass(frozen=True)
class Users:
    """A closed-model level: its users, and the phase before it (its users, answers per second
    and p95 in ms), when there was one."""

    users: int
    previous_users: int | None = None
    previous_rps: float | None = None
    previous_p95_ms: float | None = None


@dataclass(frozen=True)
class Diagnosis:
    """The level's cause: `kind` is passed, errors, generator, stall, saturation or cannot tell; `resource`
    names what ran out in a saturation (None when no figure was past its bound); `line` says it
    with its figures; `evidence` holds them."""

    kind: str
    line: str
    resource: str | None = None
    evidence: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def diagnose(
    seconds: Sequence[Second],
    offered_rps: float,
    pass_p95_ms: float,
    resources: Resources | None = None,
    *,
    max_fail_share: float = 0.01,
    users: Users | None = None,
    moments: Sequence[Moment] = (),
    failures: Mapping[str, int] | None = None,
) -> Diagnosis:
    """The one cause of a level's outcome; see the module doc for the questions, in order.
    `users` makes it a closed-model level (the module doc says what changes). `moments` are the
    run's other samples over the level (`stall_events`): a stall says what stood out in them.
    `failures` counts the level's failed requests by outcome (`dbladder.outcomes`)."""
    resources = resources or Resources()
    if not seconds:
        return Diagnosis("cannot tell", "cannot tell: the level has no seconds recorded")
    failing = [_fails(s, pass_p95_ms, max_fail_share) for s in seconds]
    if not any(failing):
        return Diagnosis("passed", f"passed: every second's p95 under {pass_p95_ms:g} ms")
    errors = _errors(seconds, failures or {}, max_fail_share)
    if errors is not None:
        return errors
    generator = _generator(seconds, offered_rps if users is None else 0.0, resources, pass_p95_ms)
    if generator is not None:
        return generator
    runs = _runs(failing)
    stalls = _stalls(seconds, failing, runs, pass_p95_ms)
    if stalls:
        return _stall(seconds, failing, stalls, moments)
    mostly = _failing_share(seconds, failing) > STALL_MOST_SECONDS
    if users is not None:
        closed = _closed(seconds, failing, users, resources) if mostly else None
        if closed is not None:
            return closed
    elif mostly and (_saturated(seconds) or _past_bound(resources)):
        return _saturation(seconds, offered_rps, resources)
    ranked = findings(resources)
    where = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs)
    nor = "a backlog that grew" if users is None else "throughput flat while the users grew"
    return Diagnosis(
        "cannot tell",
        f"cannot tell: seconds {where} of {len(seconds)} failed, neither stalls (the longest wait first, "
        f"the later ones ending with it) nor {nor}; closest: {ruled_out(ranked, resources)}",
        evidence={"failing_seconds": float(sum(failing)), **dict(ranked)},
    )


def _fails(second: Second, pass_p95_ms: float, max_fail_share: float) -> bool:
    due = max(second.sent, 1)
    return (second.p95_ms is not None and second.p95_ms > pass_p95_ms) or second.failed / due > max_fail_share


def _errors(
    seconds: Sequence[Second], failures: Mapping[str, int], max_fail_share: float
) -> Diagnosis | None:
    """Question 1b: the failures were answers the request does not count as a success."""
    answered = {kind: failures.get(kind, 0) for kind in ANSWERED_FAILURES if failures.get(kind, 0)}
    refused = sum(answered.values())
    failed = sum(failures.values())
    sent = sum(second.sent for second in seconds)
    if not refused or refused * 2 < failed or refused <= max_fail_share * max(sent, 1):
        return None
    kinds = ", ".join(f"{ANSWER_WORDS[kind]} {count:,}" for kind, count in answered.items())
    return Diagnosis(
        "errors",
        f"errors: {refused:,} of {sent:,} requests sent were answered with a status they do not count "
        f"as a success ({kinds}): what the app or service said, not how fast it was",
        evidence={"refused": float(refused), "sent": float(sent)},
    )


def _runs(failing: Sequence[bool]) -> list[tuple[int, int]]:
    """The runs of failing seconds, as (first, last) second numbers."""
    runs: list[tuple[int, int]] = []
    for number, fails in enumerate(failing):
        if not fails:
            continue
        if runs and runs[-1][1] == number - 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _window(seconds: Sequence[Second]) -> float:
    """The measured window's length in seconds: its seconds', a last part-second's included."""
    return sum(s.length for s in seconds) or float(len(seconds))


def _failing_share(seconds: Sequence[Second], failing: Sequence[bool]) -> float:
    return sum(s.length for s, fails in zip(seconds, failing, strict=True) if fails) / _window(seconds)


def _stall_share(seconds: Sequence[Second], runs: Sequence[tuple[int, int]]) -> float:
    """The share of the window the runs of failing seconds could be stalls in: each run's seconds
    less the one a stall across a second's boundary adds (a run of one second counts whole)."""
    lengths = [sum(s.length for s in seconds[first : last + 1]) for first, last in runs]
    return sum(max(length - 1.0, min(length, 1.0)) for length in lengths) / _window(seconds)


def _generator(
    seconds: Sequence[Second], offered_rps: float, resources: Resources, pass_p95_ms: float
) -> Diagnosis | None:
    sent_rps = sum(s.sent for s in seconds) / _window(seconds)
    lag = resources.schedule_lag_p99_ms
    cpu = resources.cpu.get("generator")
    evidence = {"sent_rps": sent_rps, "offered_rps": offered_rps, "dropped": float(resources.dropped)}
    reasons = []
    # A lag of a few ms on a busy machine cannot fail a level whose mark is 50 ms: only one that
    # is a good part of the mark could have (the requests' latency counts from their due time).
    if lag is not None and lag > SCHEDULE_LAG_P99_MS and lag >= LAG_SHARE_OF_MARK * pass_p95_ms:
        reasons.append(f"schedule lag p99 {lag:,.1f} ms (above {SCHEDULE_LAG_P99_MS:g} ms)")
        evidence["schedule_lag_p99_ms"] = lag
    # Every connection busy is the generator's own limit only when the server answered what it
    # was sent within the mark: a server that answers slowly keeps the connections busy itself,
    # and then the drops (and the sends short of the offered rate) are its saturation's symptom.
    slow_server = resources.sent_p95_ms is not None and resources.sent_p95_ms > pass_p95_ms
    if resources.dropped and not slow_server:
        reasons.append(f"{resources.dropped:,} requests dropped with every connection busy")
    if cpu is not None and cpu.allowed > 0 and cpu.used / cpu.allowed >= CPU_AT_LIMIT:
        reasons.append(f"its CPU at {cpu.used:.2f} of {cpu.allowed:g} cores")
        evidence["generator_cpu_share"] = cpu.used / cpu.allowed
    if offered_rps > 0 and sent_rps < SENT_SHORT * offered_rps and not slow_server:
        reasons.append(f"sent {sent_rps:,.0f} req/s of {offered_rps:,.0f} offered")
    if not reasons:
        return None
    return Diagnosis(
        "generator", "the generator, not the system under test: " + "; ".join(reasons), None, evidence
    )


def _stalls(
    seconds: Sequence[Second], failing: Sequence[bool], runs: Sequence[tuple[int, int]], pass_p95_ms: float
) -> list[Stall]:
    """The stalls behind the runs of failing seconds, one a run, or none when the runs are not
    stalls: together at most STALL_MOST_SECONDS of the window, and each with a stall's shape in its
    latencies (`stall_location`), wherever it falls, the window's start and end included. A result
    that kept no max per second is read by its counts, as before the max was kept: one run, with a
    passing second after it or the catch-up second (more answers than sent) as its last."""
    if not runs or _stall_share(seconds, runs) > STALL_MOST_SECONDS:
        return []
    passing = [s for s, fails in zip(seconds, failing, strict=True) if not fails]
    rate = steady_rate(passing)
    kept_max = all(seconds[n].max_ms is not None for first, last in runs for n in range(first, last + 1))
    waits = any(
        (seconds[n].max_ms or 0.0) > pass_p95_ms for first, last in runs for n in range(first, last + 1)
    )
    if kept_max and waits:
        located = [located_by_latencies(seconds, run, pass_p95_ms, rate) for run in runs]
        return [stall for stall in located if stall is not None] if all(located) else []
    if len(runs) != 1:
        return []
    first, last = runs[0]
    # Failures rather than waits (a second of 503s), or a result without each second's max.
    if last < len(seconds) - 1 or (last > first and catches_up(seconds[last])):
        return [located_by_counts(seconds, runs[0], passing)]
    return []


def _stall(
    seconds: Sequence[Second], failing: Sequence[bool], stalls: Sequence[Stall], moments: Sequence[Moment]
) -> Diagnosis:
    passing = [s for s, fails in zip(seconds, failing, strict=True) if not fails]
    evidence: dict[str, float] = {}
    described = []
    for number, stall in enumerate(stalls, 1):
        key = "stall" if number == 1 else f"stall_{number}"
        evidence |= {f"{key}_length_s": stall.length, f"{key}_start_s": stall.start}
        at = f"{stall.start:.1f} s"
        if stall.within is not None:
            at += f" (within {stall.within:.1f} s)"
            evidence[f"{key}_start_within_s"] = stall.within
        described.append(f"{stall.length:.1f} s at {at}")
    if len(stalls) > 1:
        evidence["stalls"] = float(len(stalls))
    others = [s.p95_ms for s in passing if s.p95_ms is not None]
    other_p95 = max(others, default=0.0)
    rest = sum(s.length for s in passing)
    more = [(stall.start, stall.length) for stall in stalls[1:]]
    events = stall_events(moments, stalls[0].start, stalls[0].length, more)
    evidence |= {f"in_stall.{name}": value for name, _, value in events}
    what = (
        f"a stall of {described[0]}" if len(stalls) == 1 else f"{len(stalls)} stalls: " + _listed(described)
    )
    # Only the last can outlast the window: its requests were answered after the window ended.
    last = stalls[-1]
    past = ", still stalled when the window ended" if last.start + last.length > _window(seconds) else ""
    return Diagnosis(
        "stall",
        f"{what} into the level{past}; p95 over the other {round(rest, 2):g} s was at most "
        f"{other_p95:,.1f} ms{stall_clause(events)}",
        None,
        evidence | {"other_p95_ms": other_p95},
    )


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _saturated(seconds: Sequence[Second]) -> bool:
    sent = sum(s.sent for s in seconds)
    answered = sum(s.answered for s in seconds)
    if sent and answered < SHORT_ANSWERS * sent:
        return True
    # A backlog already at the request timeout when the window opens answers as much as it is
    # sent (timeouts and 503s count as answers) and its p95 stays flat at the timeout: the
    # failures are then what fell short.
    if sent and sum(s.failed for s in seconds) > (1 - SHORT_ANSWERS) * sent:
        return True
    p95s = [s.p95_ms for s in seconds if s.p95_ms is not None]
    third = len(p95s) // 3
    if third == 0:
        return False
    return statistics.median(p95s[-third:]) >= CLIMB * statistics.median(p95s[:third])


def _closed(
    seconds: Sequence[Second], failing: Sequence[bool], users: Users, resources: Resources
) -> Diagnosis | None:
    """A closed-model level most of whose seconds failed: saturation when its throughput stayed
    flat while the users grew (against the phase before), or, for a first phase, when a resource
    is past its bound; None otherwise (the caller cannot tell)."""
    answered_rps = sum(s.answered for s in seconds) / _window(seconds)
    p95s = [s.p95_ms for s in seconds if s.p95_ms is not None]
    p95 = statistics.median(p95s) if p95s else None
    evidence: dict[str, float] = {"answered_rps": answered_rps, "users": float(users.users)}
    if p95 is not None:
        evidence["p95_median_ms"] = p95
    previous_users, previous_rps, previous_p95 = (
        users.previous_users,
        users.previous_rps,
        users.previous_p95_ms,
    )
    if previous_users and previous_rps and previous_p95 is not None and users.users > previous_users:
        grew = users.users / previous_users - 1
        gained = answered_rps / previous_rps - 1
        if gained >= CLOSED_FLAT_GROWTH * grew or p95 is None or p95 <= previous_p95:
            return None
        evidence |= {"previous_users": float(previous_users), "previous_rps": previous_rps}
        pattern = (
            f"throughput flat while the users grew: {previous_users:,} to {users.users:,} users, "
            f"{previous_rps:,.0f} to {answered_rps:,.0f} req/s, p95 {previous_p95:,.0f} to {p95:,.0f} ms"
        )
        return _saturation(seconds, 0.0, resources, pattern, evidence)
    if p95 is None or not _past_bound(resources):
        return None
    pattern = f"at {users.users:,} users: {answered_rps:,.0f} req/s, p95 {p95:,.0f} ms"
    return _saturation(seconds, 0.0, resources, pattern, evidence)


def _saturation(
    seconds: Sequence[Second],
    offered_rps: float,
    resources: Resources,
    pattern: str | None = None,
    evidence: dict[str, float] | None = None,
) -> Diagnosis:
    """Saturation, with what ran out when a resource is past its bound; `pattern` and `evidence`
    (the closed model's) replace the open model's answers against the offered rate."""
    if pattern is None or evidence is None:
        answered_rps = sum(s.answered for s in seconds) / _window(seconds)
        p95s = [s.p95_ms for s in seconds if s.p95_ms is not None]
        evidence = {"answered_rps": answered_rps, "offered_rps": offered_rps}
        pattern = f"answered {answered_rps:,.0f} req/s of {offered_rps:,.0f} offered"
        if p95s:
            pattern += f", p95 from {p95s[0]:,.0f} ms to {p95s[-1]:,.0f} ms"
            evidence |= {"p95_first_ms": p95s[0], "p95_last_ms": p95s[-1]}
    ranked = findings(resources)
    evidence |= dict(ranked)
    name = named(ranked, resources)
    if name is not None:
        evidence |= evidence_of(name, resources)
        return Diagnosis("saturation", f"{finding_line(name, resources)} ({pattern})", name, evidence)
    return Diagnosis(
        "saturation",
        f"saturation ({pattern}); which resource ran out cannot be told: "
        + (f"none reached its bound: {ruled_out(ranked, resources)}" if ranked else "none measured"),
        None,
        evidence,
    )


def _past_bound(resources: Resources) -> bool:
    """Whether a measured resource is at or past its bound."""
    ranked = findings(resources)
    return bool(ranked) and ranked[0][1] >= 1.0
