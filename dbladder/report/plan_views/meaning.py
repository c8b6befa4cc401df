"""What a report's result table means, for the plans of the rounds in it.

A report may hold rounds of every plan: ladders and searches (open model, whose ceiling is an
offered rate), users rounds and spikes (closed model). The paragraph over its result table says
what each kind of figure is, once per kind the report holds, so it is written here, where the
plans are told apart, from the views of the rounds' plans.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ladder_view import PlanView
from .search_view import SearchView
from .users_view import UsersView

BOUNDS = (
    "`≥` marks a run in which no level failed (its limit lies higher), `<` one whose first level "
    "already failed."
)


def result_words(plans: Sequence[PlanView], marks: Sequence[str]) -> str:
    """The paragraph over the result table: the pass mark (`marks`, each round's in words), then
    what each plan's figure is, for the plans (one view per round) the report holds."""
    users = [plan for plan in plans if isinstance(plan, UsersView) and not plan.spike]
    spikes = [plan for plan in plans if plan.spike]
    ladders = [plan for plan in plans if not isinstance(plan, UsersView)]
    search_words = (
        " In a ceiling search (probes at rates chosen one after another) the ceiling is the highest "
        "rate held below the lowest rate failed."
        if any(isinstance(plan, SearchView) for plan in ladders)
        else ""
    )
    if not users and not spikes:
        return (
            f"The pass mark for a level is {' / '.join(marks)}; the ceiling is the offered rate of the "
            f"highest level held, in requests per second.{search_words} {BOUNDS}"
        )
    words = [f"The pass mark for a level is {' / '.join(marks)}."]
    if ladders:
        words.append(
            "In a ladder round the ceiling is the offered rate of the highest level held, in requests "
            "per second." + search_words
        )
    if users:
        think = " / ".join(dict.fromkeys(plan.think_words() for plan in users))
        words.append(
            f"In a users round (closed model: each user sends a request, waits for the answer, thinks "
            f"{think} and sends the next) a level is a number of users: the ceiling is the highest users "
            "level held and the rate, in requests per second, those users achieved there; peak is the "
            "most answers per second any level achieved."
        )
    if spikes:
        words.append(
            "A spike round's figure is the rate answered at the spike (the phase with the most users); "
            "p95 recovery is how long after the spike p95 took to come back near its value before it."
        )
    if ladders or users:
        words.append(BOUNDS)
    return " ".join(words)
