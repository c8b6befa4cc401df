import pytest

from dbladder.errors import InvalidConfig
from dbladder.result.passmark import PassMark, ceiling


def test_a_level_passes_only_under_both_bounds():
    mark = PassMark(p95_ms=50, max_fail_pct=1)
    assert mark.judge(requests=1000, p95_ms=49.9, fail_pct=0.99) == []
    assert mark.judge(requests=1000, p95_ms=50.0, fail_pct=0) == ["p95 50.0 ms is not under 50 ms"]
    assert mark.judge(requests=1000, p95_ms=3, fail_pct=1.0) == ["1.00 % failed is not under 1 %"]
    assert len(mark.judge(requests=1000, p95_ms=80, fail_pct=5)) == 2
    assert mark.judge(requests=0, p95_ms=0, fail_pct=0) == ["no request was measured in this level"]


def test_ceiling_is_the_highest_step_of_the_unbroken_run_of_passes():
    assert ceiling([1000, 2000, 3000], [True, True, False]) == 2000
    assert ceiling([1000, 2000, 3000, 4000], [True, False, True, True]) == 1000
    assert ceiling([1000, 2000], [False, True]) is None
    assert ceiling([], []) is None


def test_bad_pass_mark_lists_every_problem():
    with pytest.raises(InvalidConfig) as caught:
        PassMark(p95_ms=0, max_fail_pct=120).checked()
    assert len(caught.value.problems) == 2
