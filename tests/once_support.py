"""Something slow to make (a real run's bundle) made once for the whole suite, not once per worker.

A module- or session-scoped fixture is made again in every xdist worker that runs one of its
tests; with worksteal that is often all four of them, each making the same runs at once. Here the
workers share one folder of the session (pytest's base temporary folder's parent under xdist) and
a lock beside it: the first to ask makes the thing, the others wait for it and read it.

    folder = made_once(tmp_path_factory, "report_bundles", make)   # make(folder) fills it
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest

DONE = ".made"


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `make` in the first process to ask in this session; every other
    one waits on the lock until it is done. If `make` raises, the marker is not written and the
    next process to ask tries again (and fails on its own)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    # Without xdist the base folder's parent is shared by every session of the user: not this one's.
    root = factory.getbasetemp().parent if worker else factory.getbasetemp()
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also after an error
        if not (folder / DONE).exists():
            folder.mkdir(exist_ok=True)
            make(folder)
            (folder / DONE).touch()
    return folder
