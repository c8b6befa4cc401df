"""The values a declared app draws: each row's random source and each request parameter."""

from __future__ import annotations

import random

import pytest

from dbladder.errors import InvalidRequest
from dbladder.workloads.base import Draw
from dbladder.workloads.values import Param, RowRandom

SIZES = {"users": 7}


def test_a_row_draws_the_same_values_for_the_same_seed_table_and_row():
    first = RowRandom(1, 0, 42, SIZES)
    again = RowRandom(1, 0, 42, SIZES)
    draws = [first.below(1000), first.between(5, 9), first.id("users"), first.text(2, 3)]
    assert draws == [again.below(1000), again.between(5, 9), again.id("users"), again.text(2, 3)]
    other_row = RowRandom(1, 0, 43, SIZES)
    other_table = RowRandom(1, 1, 42, SIZES)
    other_seed = RowRandom(2, 0, 42, SIZES)
    samples = {tuple(r.below(2**32) for _ in range(4)) for r in (other_row, other_table, other_seed)}
    assert len(samples) == 3  # each of seed, table and row number changes the stream


def test_row_values_stay_within_their_bounds():
    r = RowRandom(3, 2, 1, SIZES)
    for _ in range(2000):
        assert 0 <= r.below(10) < 10
        assert 5 <= r.between(5, 9) <= 9
        assert 1 <= r.id("users") <= 7
        assert 2 <= len(r.text(2, 4).split()) <= 4
        assert r.choice("ab") in "ab"


def test_a_drawn_parameter_passes_its_own_check():
    draw = Draw(random.Random(1).random)
    params = {
        "id": Param.row("users"),
        "n": Param.integer(-3, 3),
        "title": Param.text(1, 5),
        "state": Param.choice("open", 2),
    }
    for _ in range(500):
        for name, param in params.items():
            value = param.draw(draw, SIZES)
            assert param.check(name, value) == value
    assert {Param.row("users").draw(draw, SIZES) for _ in range(500)} == set(range(1, 8))


def test_a_value_from_a_path_is_read_as_the_parameter_says():
    assert Param.row("users").check("id", "12") == 12
    assert Param.integer(-3, 3).check("n", "-3") == -3
    assert Param.choice("open", 2).check("state", "2") == 2


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        (Param.row("users"), "0", "id must be a whole number from 1 to 9223372036854775807, not '0'"),
        (Param.integer(1, 5), 6, "id must be a whole number from 1 to 5, not '6'"),
        (Param.integer(1, 5), True, "id must be a whole number from 1 to 5, not 'True'"),
        (Param.text(), "", "id must be text of 1 to 200 printable characters"),
        (Param.text(), "a\nb", "id must be text of 1 to 200 printable characters"),
        (Param.choice("open", "done"), "nope", "id must be one of open, done"),
    ],
)
def test_a_bad_value_is_refused_naming_the_parameter(param, value, message):
    with pytest.raises(InvalidRequest) as refused:
        param.check("id", value)
    assert str(refused.value) == message


def test_a_parameter_that_cannot_be_drawn_says_why():
    assert Param.row("orders").validate("id", SIZES) == [
        "parameter id: Param.row('orders') needs a size for 'orders' in sizes"
    ]
    assert Param.integer(5, 1).validate("n", SIZES) == ["parameter n: low must not be above high (5 > 1)"]
    assert Param.choice().validate("s", SIZES) == ["parameter s: Param.choice needs at least one option"]
    assert Param.text(1, 3).validate("t", SIZES) == []
