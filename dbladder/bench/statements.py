"""The raw queries of "SQLite handled 315 million daily requests on a laptop" on the Chirp posts
table, and the ids they are run with: what dbladder's rounds (`rounds.py`) and the bare references
(`references.py`) both run, so the two measure the same work."""

from __future__ import annotations

import time

import numpy as np

POINT_READ = "SELECT id, user_id, body, created_at FROM posts WHERE id = ?"
INSERT_POST = "INSERT INTO posts (user_id, body, created_at) VALUES (?, ?, ?)"
LAST_IDS = "SELECT (SELECT max(id) FROM users), (SELECT max(id) FROM posts)"
DELETE_POSTS_AFTER = "DELETE FROM posts WHERE id > ?"
STATEMENTS = (POINT_READ, INSERT_POST, LAST_IDS, DELETE_POSTS_AFTER)
BENCH_BODY = "Benchmarking a single file and nothing broke. #sqlite"
IDS_PER_TASK = 1 << 16  # drawn ahead, used in a cycle: drawing must not be what is measured


def now() -> int:
    """A written post's created_at: now, as the app stamps a new post."""
    return int(time.time())


def draw_ids(seed: int, stream: int, highest: int, count: int = IDS_PER_TASK) -> list[int]:
    """`count` ids uniform over 1..highest, the same for the same (seed, stream)."""
    return np.random.default_rng([seed, stream]).integers(1, highest + 1, count).tolist()
