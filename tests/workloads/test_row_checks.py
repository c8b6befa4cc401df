"""A declared app's rows checked as they are made: every type, both kinds of key, bitmap and set."""

import math

import pytest

from dbladder.engines.base import Column, Table
from dbladder.workloads.base import WorkloadError
from dbladder.workloads.row_checks import RowChecks

TABLE = Table(
    "t",
    (
        Column("id", "bigint"),
        Column("i", "int"),
        Column("d", "double"),
        Column("b", "bool"),
        Column("s", "text", max_length=3),
    ),
    primary_key=("id",),
)
GOOD = (1, 5, 1.5, 1, "abc")


def refusal(row, n=1):
    with pytest.raises(WorkloadError) as caught:
        RowChecks("app.py: rows['t']", TABLE, 10).check(n, row)
    return str(caught.value)


def test_good_rows_pass():
    checks = RowChecks("app.py: rows['t']", TABLE, 10)
    checks.check(1, GOOD)
    checks.check(2, (2, True, 3, False, ""))  # True is 1 to every driver; an int is a double


@pytest.mark.parametrize(
    ("position", "value", "problem"),
    [
        (1, "5", "column 'i': '5' is text, not an int"),
        (1, 1.0, "column 'i': 1.0 is a float, not an int"),
        (1, 2**31, "column 'i': 2147483648 is outside an int's range, -2,147,483,648 to 2,147,483,647"),
        (0, 2**63, "column 'id': 9223372036854775808 is outside a bigint's range"),
        (2, "1.5", "column 'd': '1.5' is text, not a double"),
        (2, math.nan, "column 'd': nan is not a finite double"),
        (3, 2, "column 'b': 2, not a bool (0 or 1)"),
        (3, None, "column 'b': None is a NoneType, not a bool (0 or 1)"),
        (4, 7, "column 's': 7 is an int, not text"),
        (4, "abcd", "column 's': text of 4 characters, over the column's max_length 3"),
    ],
)
def test_a_bad_value_names_the_row_and_the_column(position, value, problem):
    row = list(GOOD)
    row[position] = value
    assert refusal(tuple(row), n=4).startswith(f"app.py: rows['t'] row 4, {problem}")


@pytest.mark.parametrize("key", [3, 10**9, -1, "x"])  # in the bitmap, and beyond it in the set
def test_a_repeated_key_is_found_in_the_bitmap_and_in_the_set(key):
    table = Table("k", (Column("id", "text" if key == "x" else "bigint"),), primary_key=("id",))
    checks = RowChecks("app.py: rows['k']", table, 10)
    checks.check(1, (key,))
    checks.check(2, ("y" if key == "x" else 4,))
    with pytest.raises(WorkloadError) as caught:
        checks.check(3, (key,))
    assert str(caught.value) == (
        f"app.py: rows['k'] row 3, column 'id': repeats the primary key (id = {key!r}) of an earlier row"
    )


def test_a_composite_key_and_a_unique_index():
    table = Table("p", (Column("a", "int"), Column("b", "int"), Column("c", "int")), primary_key=("a", "b"))
    checks = RowChecks("app.py: rows['p']", table, 10, unique=[("c",)])
    checks.check(1, (1, 1, 1))
    checks.check(2, (1, 2, 2))
    with pytest.raises(WorkloadError) as caught:
        checks.check(3, (1, 2, 3))
    assert str(caught.value).endswith(
        "row 3, columns 'a', 'b': repeats the primary key (a = 1, b = 2) of an earlier row"
    )
    with pytest.raises(WorkloadError) as caught:
        checks.check(4, (2, 2, 1))
    assert str(caught.value).endswith("row 4, column 'c': repeats the unique index (c = 1) of an earlier row")


def test_keys_up_to_the_bound_fill_a_bitmap_not_a_set():
    table = Table("k", (Column("id", "bigint"),), primary_key=("id",))
    checks = RowChecks("app.py: rows['k']", table, 1000)
    for n in range(1, 1001):
        checks.check(n, (n * 3,))
    seen = checks._keys[0]
    assert not seen._others and len(seen._bitmap) <= 2 * 3000 // 8 + 1  # 8 keys a byte, grown by doubling
