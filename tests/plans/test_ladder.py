"""The linear ladder (dbladder.plans.ladder): its validation."""

from __future__ import annotations

import pytest

from dbladder.errors import InvalidConfig
from dbladder.plans import MAX_REQUESTS, Ladder

# Seed 000's read ladder: 1,000 to 20,000 requests/s in steps of 1,000, 30 s each.
READ = Ladder(start=1000, step=1000, steps=20, hold=30)


def test_validation_lists_every_problem() -> None:
    problems = Ladder(start=0, step=-1, steps=0, hold=0, warmup=-1).validate()
    assert len(problems) == 5
    for field, problem in zip(["start", "step", "steps", "hold", "warmup"], problems, strict=True):
        assert problem.startswith(field + " ")
    problems = Ladder(start=-5, step=1.5, steps=2.0, hold=10, warmup=10).validate()  # type: ignore[arg-type]
    assert [p.split()[0] for p in problems] == ["start", "steps", "warmup"]
    problems = Ladder(start=float("nan"), step=float("inf"), steps=True, hold=1).validate()
    assert [p.split()[0] for p in problems] == ["start", "step", "steps"]
    assert READ.validate() == []


def test_validation_bounds_the_total() -> None:
    problems = Ladder(start=100_000, step=100_000, steps=100, hold=3600).validate()
    assert len(problems) == 1
    assert "requests" in problems[0] and f"{MAX_REQUESTS:,}" in problems[0]


def test_checked_raises_invalid_config_with_every_problem() -> None:
    with pytest.raises(InvalidConfig) as caught:
        Ladder(start=0, step=0, steps=1, hold=-1).checked()
    assert len(caught.value.problems) == 2
    assert "start must be" in str(caught.value) and "hold must be" in str(caught.value)
    assert READ.checked() is READ
    with pytest.raises(InvalidConfig):
        Ladder(start=0, step=0, steps=1, hold=1).levels()
