"""`--drop-caches`: the kernel's page cache emptied before each run, so every run starts from disk
as "Postgres vs MariaDB on two dedicated CPUs" started every one of its runs."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import BadPlacement

DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def drop_caches_problem() -> str | None:
    """Why the page cache cannot be dropped here, on one line, or None when it can."""
    if os.geteuid() != 0:
        return f"--drop-caches: only root may drop the page cache (it writes {DROP_CACHES})"
    if not os.access(DROP_CACHES, os.W_OK):
        return f"--drop-caches: {DROP_CACHES} is not writable here (a container without that right?)"
    return None


def drop_page_cache() -> None:
    """Write dirty pages out, then drop the clean page cache, dentries and inodes (BadPlacement if
    not allowed). Only clean pages can be dropped, hence the sync first."""
    problem = drop_caches_problem()
    if problem is not None:
        raise BadPlacement(problem)
    os.sync()
    DROP_CACHES.write_text("3\n")
