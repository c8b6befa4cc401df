"""The plans as the reports ask them: each plan's view of a finished run, picked by `view_of`.

A run climbed a ladder of arrival rates, searched for its ceiling with probes, or ran phases of
users (closed model), of which a spike is one shape. Each plan has its view (`ladder_view.PlanView`,
the ladder's and the base of the others; `search_view.py`; `users_view.py`, spikes included) over
the result's record of the plan (`dbladder.plans.record`); `view_of` gives a run's, from the plan
`dbladder.plans.plan_class_of` says it followed, and `meaning.py` writes the paragraph on what the
figures of the plans a report holds mean. The rest of report/ asks the view instead of asking
which kind of plan a run followed (tests/test_plan_kinds.py).
"""

from __future__ import annotations

from ...plans import PLANS, Plan, plan_class_of
from ...plans.record import RunRecord
from .ladder_view import PlanView
from .search_view import SearchView
from .users_view import UsersView

VIEWS: dict[type[Plan], type[PlanView]] = {view.plan: view for view in (PlanView, SearchView, UsersView)}
"""Each plan's view, by the plan (`PlanView.plan`); every plan of `dbladder.plans.PLANS` has one."""


def view_of(record: RunRecord) -> PlanView:
    """The view of the plan a finished run followed: what the reports ask of it."""
    return VIEWS[plan_class_of(record)](record)


__all__ = ["PLANS", "VIEWS", "PlanView", "SearchView", "UsersView", "view_of"]
