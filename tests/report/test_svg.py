"""The charts' axes and points (`dbladder.report.svg`)."""

from __future__ import annotations

import re

import pytest

from dbladder.report.svg import Axis, Chart, Point, linear_ticks, log_ticks


def test_linear_ticks_are_round_and_cover_the_values():
    assert linear_ticks(0, 2000) == [0, 500, 1000, 1500, 2000]
    assert linear_ticks(0, 1.5) == [0, 0.5, 1.0, 1.5]
    assert linear_ticks(0, 2400) == [0, 500, 1000, 1500, 2000, 2500]
    assert linear_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_log_ticks_label_decades_and_add_2_and_5_on_short_axes():
    labelled, minor = log_ticks(0.4, 60)
    assert labelled == [0.1, 1, 10, 100]
    assert 0.2 in minor and 50 in minor
    labelled, _ = log_ticks(3, 40)
    assert labelled == [1, 2, 5, 10, 20, 50, 100]


def test_a_point_lands_where_its_value_says():
    chart = Chart("t", Axis.covering([0, 2000], "x"), Axis.covering([1, 100], "y", log=True), 640, 360)
    # Plot area: x from 66 to 622, y from 314 (bottom) to 34 (top); y spans the decades 1 to 100.
    assert chart.px(0) == pytest.approx(66) and chart.px(2000) == pytest.approx(622)
    assert chart.py(10) == pytest.approx((314 + 34) / 2)
    chart.series("s", [Point(1000, 10), Point(1500, 0), Point(2000, None)], "#000")
    svg = chart.svg()
    assert re.search(r'<circle cx="344.0" cy="174.0" r="4.0" [^>]*data-x="1000" data-y="10"', svg)
    assert svg.count('class="point"') == 1  # 0 has no place on a log axis, None is no figure
