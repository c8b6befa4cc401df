"""The verdict in sentences: what each run held, and each engine against the best one.

Open model: the offered rate of the highest step held. Closed model: the users level held and the
rate those users achieved, and the peak. A spike: each phase's rate and p95, and how long p95 took
to come back. Comparisons follow the verdict rule (`dbladder.result.verdict.RULE`, stated in every
comparison report): an engine is named ahead only when the rule says so, a figure that is a bound
stays a bound ("at least 57 % more"), and with fewer than 3 runs of an engine the gap is not a result.
"""

from __future__ import annotations

from ..result.verdict import MIN_RUNS
from .figures import rate
from .runs import Group, Round, RunInRound, doubt_words, few_runs, interval_words, single_run, verdict


def spike_words(run: RunInRound) -> str:
    """A spike run in a sentence: each phase's rate and p95, the phases that failed, the recovery."""
    return run.plan.sentence(run.name)


def run_verdict(run: RunInRound) -> str:
    """One run in a sentence: what it held, and why the next level failed (`PlanView.sentence`)."""
    if not run.levels:
        return f"{run.name} finished no level."
    return run.plan.sentence(run.name)


def _few(round_: Round) -> str:
    """The qualifier a gap gets when an engine ran fewer times than the rule needs."""
    if not few_runs(round_.groups):
        return ""
    if single_run(round_.groups):
        return " One run cannot tell a gap of this size from run-to-run noise."
    return f" The rule needs {MIN_RUNS} runs of each engine to name one ahead: this gap is not a result yet."


def _judged(best: Group, other: Group, round_: Round, figures: str, what: str, where: str) -> str | None:
    """The sentence when the rule has its say (no winner, a bound), None when it names a winner."""
    found = verdict(best, other)
    doubts = doubt_words(best, other)
    if found.outcome == "too few runs":
        ahead = f"{where}{best.label} is ahead by its median ({figures})"
        return f"{ahead}, but no winner is named.{_few(round_)}{doubts}"
    interval = f"the 95 % interval of the ratio is {interval_words(found)}"
    if found.outcome == "overlap":
        return f"{where}{best.label} is ahead by its runs ({figures}), but no winner is named.{doubts}"
    if found.outcome == "same":
        return f"{where}{best.label} and {other.label} are about the same ({figures}; {interval})."
    if found.outcome == "unclear":
        return (
            f"{where}{best.label} is ahead by its runs ({figures}), but the runs vary too much to "
            f"tell them apart ({interval}): treat it as no result, not as level."
        )
    if found.outcome == "bounds":
        return (
            f"{where}{best.label} and {other.label} cannot be ordered ({figures}): one held every level, "
            "so its limit lies higher than its figure."
        )
    return None


def _gain_words(best: Group, other: Group) -> str:
    """ "57 %", "at least 57 %" (the winner's figure is a floor) by the rule's ratio, or by the medians
    when the rule could not judge."""
    found = verdict(best, other)
    gain = 100 * (best.median - other.median) / other.median  # by the medians, as the table shows them
    at_least = found.at_least if found.named else best.lower_bound
    return ("at least " if at_least else "") + f"{gain:.0f} %"


def _pair(best: Group, other: Group, round_: Round) -> str:
    """The best engine against another, in the words of the round's plan (`PlanView.pair_words`):
    what each held ("At the highest users level each held", "At the spike"), or that both held
    the top."""
    plan = round_.plan
    words = plan.pair_words()
    figures = f"{rate(best.median)} against {rate(other.median)} req/s"
    if best.lower_bound and other.lower_bound:
        both = plan.both_held(best.label, other.label, best.median, other.median)
        if both is not None:
            return both
    if other.median <= 0:
        return (
            f"{best.label} {words.what} {rate(best.median)} req/s; {other.label} {words.none_held}."
            + _few(round_)
        )
    judged = _judged(best, other, round_, figures, words.what, words.where)
    if judged is not None:
        return judged
    limit = ", and its own limit lies higher" if words.limit_note and best.lower_bound else ""
    return (
        f"{words.where}{best.label} {words.what} {_gain_words(best, other)} more than {other.label} "
        f"({figures}{limit})." + _few(round_)
    )


def round_verdict(round_: Round) -> list[str]:
    """The verdict of a round in sentences: each engine against the best one."""
    if len(round_.groups) == 1:
        return [run_verdict(run) for run in round_.runs]
    ordered = sorted(round_.groups, key=lambda group: group.median, reverse=True)
    sentences = [_pair(ordered[0], other, round_) for other in ordered[1:]]
    if round_.spike:
        sentences += [spike_words(run) for run in round_.runs]
    return sentences


def title_words(run: RunInRound) -> str:
    """A single run's headline for the report's title: "held 1,000 req/s", "held 80 users, 796 req/s"."""
    return run.plan.title_words()
