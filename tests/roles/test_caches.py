"""--drop-caches: root only, refused in one line otherwise, before anything starts."""

from __future__ import annotations

import os

import pytest

from dbladder.roles import BadPlacement, drop_caches_problem, parse_placement


def as_nobody(check) -> str:
    """What `check()` says in a fork that has given up root."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(65534, 65534, 65534)
            os.write(writer, check().encode())
        except BaseException as exc:
            os.write(writer, f"{type(exc).__name__}: {exc}".encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    return said


def test_only_root_may_drop_the_page_cache() -> None:
    if os.geteuid() != 0:
        assert (
            drop_caches_problem()
            == "--drop-caches: only root may drop the page cache (it writes /proc/sys/vm/drop_caches)"
        )
        return

    def refused() -> str:
        try:
            parse_placement(drop_caches=True)
        except BadPlacement as exc:
            return str(exc)
        return "accepted"

    assert as_nobody(refused) == (
        "--drop-caches: only root may drop the page cache (it writes /proc/sys/vm/drop_caches)"
    )


def test_root_is_allowed_where_the_file_is_writable() -> None:
    if os.geteuid() != 0:
        pytest.skip("not root")
    problem = drop_caches_problem()
    if problem is not None:
        pytest.skip(problem)
    assert parse_placement(drop_caches=True).drop_caches
