"""Chirp's integrity check after a run: every acknowledged write there and intact, and the
invariants of a social graph holding over the whole data set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...engines.base import Engine, Session
from .data import ChirpConfig
from .endpoints import body_crc

WRITES = ("create_post", "like", "follow")

BATCH = 500
"""Acknowledged writes looked up per query, the pairs as row values (`(user_id, post_id) IN ((?, ?),
...)`, which all three engines take and answer from the primary key). One query per write took
20 s for 170,000 writes on PostgreSQL and on MariaDB here; 500 a query, 2.1 and 6.3 s (SQLite 0.65
-> 0.23 s; `python benchmarks/integrity_chirp.py URL ...`). The last batch is padded with repeats
of its last key, so that each lookup is one statement text, prepared once."""


def _keys_in(columns: str, width: int) -> str:
    one = "?" if width == 1 else "(" + ", ".join(["?"] * width) + ")"
    return f"{columns} IN ({', '.join([one] * BATCH)})"


POSTS_BY_ID = f"SELECT id, user_id, created_at, body FROM posts WHERE {_keys_in('id', 1)}"
LIKES_THERE = f"SELECT user_id, post_id FROM likes WHERE {_keys_in('(user_id, post_id)', 2)}"
FOLLOWS_THERE = (
    f"SELECT follower_id, followee_id FROM follows WHERE {_keys_in('(follower_id, followee_id)', 2)}"
)

# (what the count counts, which must be 0; the count). Whole tables: at the post's size they take
# seconds on every engine (docs/chirp.md), once, after the run. One anti-join per condition: an OR
# of two NOT EXISTS keeps PostgreSQL from a hash anti-join (17 s for the likes, against 2-4 s).
INVARIANTS = (
    ("self-follows", "SELECT count(*) FROM follows WHERE follower_id = followee_id"),
    (
        "follows by a user that does not exist",
        "SELECT count(*) FROM follows f WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = f.follower_id)",
    ),
    (
        "follows of a user that does not exist",
        "SELECT count(*) FROM follows f WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = f.followee_id)",
    ),
    (
        "likes by a user that does not exist",
        "SELECT count(*) FROM likes l WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = l.user_id)",
    ),
    (
        "likes of a post that does not exist",
        "SELECT count(*) FROM likes l WHERE NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = l.post_id)",
    ),
    (
        "posts whose author does not exist",
        "SELECT count(*) FROM posts p WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = p.user_id)",
    ),
    (
        "(user, post) pairs liked more than once",
        "SELECT count(*) FROM (SELECT user_id, post_id FROM likes GROUP BY user_id, post_id "
        "HAVING count(*) > 1) d",
    ),
    (
        "(follower, followee) pairs followed more than once",
        "SELECT count(*) FROM (SELECT follower_id, followee_id FROM follows "
        "GROUP BY follower_id, followee_id HAVING count(*) > 1) d",
    ),
    (
        "handles of more than one user",
        "SELECT count(*) FROM (SELECT handle FROM users GROUP BY handle HAVING count(*) > 1) d",
    ),
)


async def verify(
    engine: Engine, users: int, posts: int, acknowledged: Mapping[str, Sequence[tuple[Any, ...]]]
) -> dict[str, Any]:
    """The interface's `Workload.verify` for a data set seeded with `users` and `posts`.

    `acknowledged` holds the records of `endpoints.acknowledge_*`: create_post (id, author,
    created_at, crc32 of the text), like and follow (the pair). A post that is not there is lost,
    one that is there with another author, time or text corrupted; a like or follow answered 200
    or 201 must be there. No write deletes, so the seeded rows must all be there too.
    """
    seeded = ChirpConfig.of(users, posts)
    violations: list[str] = []
    async with engine.read() as session:
        lost, corrupted = await lost_and_corrupted(session, acknowledged)
        for problem, sql in INVARIANTS:
            count = await _count(session, sql)
            if count:
                violations.append(f"{problem}: {count:,}")
        violations += await _seeded_rows_missing(session, seeded)
    count = sum(len(acknowledged.get(name, ())) for name in WRITES)
    return {
        "checked": True,
        "acknowledged": count,
        "present": count - lost,
        "lost": lost,
        "corrupted": corrupted,
        "violations": violations,
        "invariant_checks": len(INVARIANTS) + 4,
        "what": "every acknowledged post's author, time and text, every acknowledged like and follow; "
        "no self-follow, no row pointing at a missing user or post, no duplicate like, follow or "
        "handle, every seeded row still there",
    }


async def lost_and_corrupted(
    session: Session, acknowledged: Mapping[str, Sequence[tuple[Any, ...]]]
) -> tuple[int, int]:
    """How many acknowledged writes are not there, and how many posts are there changed (another
    author, time or text), looked up BATCH at a time; each acknowledgement counts."""
    lost, corrupted = 0, 0
    new_posts = acknowledged.get("create_post", ())
    keys = [(post[0],) for post in new_posts]
    found = {row[0]: row[1:] for row in await _rows_of(session, POSTS_BY_ID, keys)}
    for post_id, author, created_at, crc in new_posts:
        row = found.get(post_id)
        if row is None:
            lost += 1
        elif (row[0], row[1], body_crc(str(row[2]))) != (author, created_at, crc):
            corrupted += 1
    for name, sql in (("like", LIKES_THERE), ("follow", FOLLOWS_THERE)):
        pairs = acknowledged.get(name, ())
        there = {tuple(row) for row in await _rows_of(session, sql, pairs)}
        lost += sum(1 for pair in pairs if tuple(pair) not in there)
    return lost, corrupted


async def _rows_of(session: Session, sql: str, keys: Sequence[Sequence[Any]]) -> list[Any]:
    """The rows `sql` (a lookup of BATCH keys) finds for `keys`, BATCH at a time."""
    rows: list[Any] = []
    for start in range(0, len(keys), BATCH):
        batch = list(keys[start : start + BATCH])
        batch += [batch[-1]] * (BATCH - len(batch))
        rows += await session.fetch_all(sql, [value for key in batch for value in key])
    return rows


async def _count(session: Session, sql: str, args: Sequence[Any] = ()) -> int:
    row = await session.fetch_one(sql, args)
    return int(row[0]) if row else 0


async def _seeded_rows_missing(session: Session, seeded: ChirpConfig) -> list[str]:
    """Sentences for each table with fewer rows than were seeded (users: other than seeded)."""
    problems = []
    users = await _count(session, "SELECT count(*) FROM users")
    if users != seeded.users:
        problems.append(
            f"users holds {users:,} rows, not the {seeded.users:,} seeded (no operation adds one)"
        )
    posts = await _count(session, "SELECT count(*) FROM posts WHERE id <= ?", (seeded.posts,))
    if posts != seeded.posts:
        problems.append(f"seeded posts missing: {seeded.posts - posts:,} of {seeded.posts:,}")
    for table, planned in (("follows", seeded.follows), ("likes", seeded.likes)):
        count = await _count(session, f"SELECT count(*) FROM {table}")
        if count < planned:
            problems.append(f"{table} holds {count:,} rows, fewer than the {planned:,} seeded")
    return problems
