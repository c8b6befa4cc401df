"""--drop-caches: root only, refused in one line otherwise, before anything starts."""

from __future__ import annotations

import os

import pytest
from privilege_support import as_nobody

from dbladder.roles import drop_caches_problem, parse_placement


def test_only_root_may_drop_the_page_cache() -> None:
    if os.geteuid() != 0:
        assert (
            drop_caches_problem()
            == "--drop-caches: only root may drop the page cache (it writes /proc/sys/vm/drop_caches)"
        )
        return

    assert as_nobody(lambda: parse_placement(drop_caches=True)) == (
        "--drop-caches: only root may drop the page cache (it writes /proc/sys/vm/drop_caches)"
    )


def test_root_is_allowed_where_the_file_is_writable() -> None:
    if os.geteuid() != 0:
        pytest.skip("not root")
    problem = drop_caches_problem()
    if problem is not None:
        pytest.skip(problem)
    assert parse_placement(drop_caches=True).drop_caches
