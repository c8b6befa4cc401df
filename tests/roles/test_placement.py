"""--cpus and --memory read into a Placement: every bad input one line that names the option."""

from __future__ import annotations

import os
import pickle

import pytest

from dbladder.errors import UsageError
from dbladder.roles import (
    MEMORY_FLOOR,
    BadPlacement,
    Placement,
    RoleLimits,
    format_cpus,
    format_size,
    parse_cpu_list,
    parse_placement,
    parse_size,
)

ALLOWED = sorted(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("text", "cpus"),
    [("0", (0,)), ("1", (1,)), ("0-3", (0, 1, 2, 3)), ("0,2", (0, 2)), ("3,0-1", (0, 1, 3)), (" 2 ", (2,))],
)
def test_a_cpu_list_reads_as_taskset_writes_it(text: str, cpus: tuple[int, ...]) -> None:
    assert parse_cpu_list(text) == cpus
    assert parse_cpu_list(format_cpus(cpus)) == cpus


def test_cpus_are_written_back_as_ranges() -> None:
    assert format_cpus([5, 0, 1, 2]) == "0-2,5"
    assert format_cpus([1]) == "1"


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("512M", 512 << 20),
        ("1G", 1 << 30),
        ("1.5G", 3 << 29),
        ("512MiB", 512 << 20),
        ("2g", 2 << 30),
        ("256MB", 256 << 20),
    ],
)
def test_a_size_takes_a_unit(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_sizes_are_written_back_as_the_options_write_them() -> None:
    assert [format_size(s) for s in (512 << 20, 1 << 30, 3 << 29)] == ["512M", "1G", "1.5G"]


def test_the_options_become_each_roles_limits() -> None:
    first = ALLOWED[0]
    placement = parse_placement([f"generator={first}", f"database={format_cpus(ALLOWED)}"], ["database=256M"])
    assert placement.generator == RoleLimits(cpus=(first,))
    assert placement.database == RoleLimits(cpus=tuple(ALLOWED), memory=256 << 20)
    assert placement.service == RoleLimits()
    assert placement.limited and placement.needs_cgroups
    assert placement.describe()["database"] == {"cpus": format_cpus(ALLOWED), "memory": 256 << 20}


def test_no_options_is_no_placement() -> None:
    assert parse_placement() == Placement()
    assert not Placement().limited


def test_a_placement_crosses_process_boundaries() -> None:
    placement = parse_placement([f"service={ALLOWED[0]}"])
    assert pickle.loads(pickle.dumps(placement)) == placement


def problem(cpus: list[str] = [], memory: list[str] = []) -> str:  # noqa: B006 - read only
    with pytest.raises(BadPlacement) as caught:
        parse_placement(cpus, memory)
    assert isinstance(caught.value, UsageError)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_unknown_role_is_named() -> None:
    assert (
        problem(["client=0"])
        == "--cpus client=0: no role 'client'; the roles are generator, service, database"
    )


def test_a_cpu_that_does_not_exist_is_refused() -> None:
    missing = (os.cpu_count() or 1) + 7
    assert problem([f"database={missing}"]).startswith(
        f"--cpus database={missing}: CPU {missing} does not exist"
    )


def test_a_list_that_is_not_one_is_refused() -> None:
    assert problem(["database=one"]) == (
        "--cpus database=one: 'one' is not a CPU number or range (write 0, 0-3 or 0,2)"
    )
    assert problem(["database=1-0"]) == "--cpus database=1-0: 1-0 runs backwards (write 0-1)"
    assert problem(["database"]).startswith("--cpus database: write ROLE=VALUE")


def test_a_role_given_twice_is_refused() -> None:
    assert "given CPUs twice" in problem([f"service={ALLOWED[0]}", f"service={ALLOWED[0]}"])


def test_a_size_without_a_unit_is_refused() -> None:
    assert problem(memory=["database=512"]) == (
        "--memory database=512: '512' is not a size with a unit (write 512M or 1G)"
    )


def test_a_size_below_the_floor_is_refused() -> None:
    assert problem(memory=["database=64M"]) == (
        f"--memory database=64M: below {format_size(MEMORY_FLOOR)} a server or a worker cannot start; "
        f"give at least {format_size(MEMORY_FLOOR)}"
    )


def test_every_problem_is_told_at_once_on_one_line() -> None:
    message = problem(["client=0"], ["database=1"])
    assert "--cpus client=0" in message and "--memory database=1" in message
