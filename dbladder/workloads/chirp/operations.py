"""Chirp's queries, written once with `?` placeholders, and one async function per operation.

    post_by_id   GET /post/{id}          a post, its author's handle and its like count
    profile      GET /u/{handle}         a user and their 20 newest posts
    timeline     GET /timeline/{user_id} the 20 newest posts of everyone the user follows, each with
                                         its author's handle and like count: the heaviest page
    create_post  POST /post              one INSERT in a write transaction (after the author check)
    like         POST /like              a like, once per (user, post)
    follow       POST /follow            a follow, once per (follower, followee)

The timeline is one statement. Its inner query picks the 20 post ids from the index on
posts (user_id, created_at, id) alone: for each followee (the follows primary key) an index range,
about 20 entries each, and a top-20 sort of the ~1,000 candidates; only then are the 20 posts, their
authors and their like counts (an index range of likes_post each) read. Selecting the bodies in the
inner query would read ~1,000 rows from the table instead of 20 (PostgreSQL's plan showed a heap
fetch per candidate). The plans on all three engines are in docs/chirp.md.

A write that finds its row already there (a like or follow made twice) is not an error: it
answers "already" (False). Between the check and the insert another client can insert the same
pair on PostgreSQL or MariaDB (SQLite's write lock serialises them); that insert then fails on the
primary key, which every engine reports as DuplicateKey, and the answer is the same.
"""

from __future__ import annotations

import time
from typing import Any

from ...engines.base import Engine
from ...errors import DuplicateKey

PAGE = 20

POST_BY_ID = (
    "SELECT p.id, p.user_id, u.handle, p.body, p.created_at, "
    "(SELECT count(*) FROM likes l WHERE l.post_id = p.id) "
    "FROM posts p JOIN users u ON u.id = p.user_id WHERE p.id = ?"
)
USER_BY_HANDLE = "SELECT id, handle, name, bio, created_at FROM users WHERE handle = ?"
USER_POSTS = (
    f"SELECT id, body, created_at FROM posts WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT {PAGE}"
)
TIMELINE = (
    "SELECT p.id, p.user_id, u.handle, p.body, p.created_at, "
    "(SELECT count(*) FROM likes l WHERE l.post_id = p.id) "
    "FROM (SELECT fp.id FROM follows f JOIN posts fp ON fp.user_id = f.followee_id "
    f"WHERE f.follower_id = ? ORDER BY fp.created_at DESC, fp.id DESC LIMIT {PAGE}) t "
    "JOIN posts p ON p.id = t.id JOIN users u ON u.id = p.user_id "
    "ORDER BY p.created_at DESC, p.id DESC"
)
USER_EXISTS = "SELECT 1 FROM users WHERE id = ?"
INSERT_POST = "INSERT INTO posts (user_id, body, created_at) VALUES (?, ?, ?) RETURNING id"
# One round trip for the checks of a like: the user and the post (2 when both exist), the like itself.
LIKE_CHECK = (
    "SELECT (SELECT count(*) FROM users WHERE id = ?) + (SELECT count(*) FROM posts WHERE id = ?), "
    "(SELECT count(*) FROM likes WHERE user_id = ? AND post_id = ?)"
)
INSERT_LIKE = "INSERT INTO likes (user_id, post_id, created_at) VALUES (?, ?, ?)"
FOLLOW_CHECK = (
    "SELECT (SELECT count(*) FROM users WHERE id IN (?, ?)), "
    "(SELECT count(*) FROM follows WHERE follower_id = ? AND followee_id = ?)"
)
INSERT_FOLLOW = "INSERT INTO follows (follower_id, followee_id, created_at) VALUES (?, ?, ?)"

STATEMENTS = (
    POST_BY_ID,
    USER_BY_HANDLE,
    USER_POSTS,
    TIMELINE,
    USER_EXISTS,
    INSERT_POST,
    LIKE_CHECK,
    INSERT_LIKE,
    FOLLOW_CHECK,
    INSERT_FOLLOW,
)

POST_FIELDS = ("id", "user_id", "handle", "body", "created_at", "likes")
USER_FIELDS = ("id", "handle", "name", "bio", "created_at")
USER_POST_FIELDS = ("id", "body", "created_at")


async def post_by_id(engine: Engine, post_id: int) -> dict[str, Any] | None:
    """A post with its author's handle and like count, or None."""
    async with engine.read() as session:
        row = await session.fetch_one(POST_BY_ID, (post_id,))
    return dict(zip(POST_FIELDS, row, strict=True)) if row else None


async def profile(engine: Engine, handle: str) -> dict[str, Any] | None:
    """{"user": ..., "posts": [20 newest]} for a handle, or None."""
    async with engine.read() as session:
        row = await session.fetch_one(USER_BY_HANDLE, (handle,))
        if row is None:
            return None
        posts = await session.fetch_all(USER_POSTS, (row[0],))
    return {
        "user": dict(zip(USER_FIELDS, row, strict=True)),
        "posts": [dict(zip(USER_POST_FIELDS, post, strict=True)) for post in posts],
    }


async def timeline(engine: Engine, user_id: int) -> list[dict[str, Any]]:
    """The 20 newest posts of the people `user_id` follows, newest first, each with its like count.

    Empty for a user who follows nobody, and for a user id that does not exist: telling the two
    apart would cost the heaviest page another round trip.
    """
    async with engine.read() as session:
        rows = await session.fetch_all(TIMELINE, (user_id,))
    return [dict(zip(POST_FIELDS, row, strict=True)) for row in rows]


async def create_post(
    engine: Engine, user_id: int, body: str, now: int | None = None
) -> dict[str, Any] | None:
    """Insert a post in one transaction; {"id", "user_id", "created_at"}, or None for an unknown user."""
    created_at = int(time.time()) if now is None else now
    async with engine.transaction() as session:
        if await session.fetch_one(USER_EXISTS, (user_id,)) is None:
            return None
        row = await session.fetch_one(INSERT_POST, (user_id, body, created_at))
    return {"id": int(row[0]), "user_id": user_id, "created_at": created_at}  # type: ignore[index]


async def like(engine: Engine, user_id: int, post_id: int, now: int | None = None) -> bool | None:
    """Like a post: True if the like is new, False if it was there already, None if the user or the
    post does not exist."""
    created_at = int(time.time()) if now is None else now
    return await _insert_pair(
        engine, LIKE_CHECK, (user_id, post_id, user_id, post_id), INSERT_LIKE, (user_id, post_id, created_at)
    )


async def follow(engine: Engine, follower_id: int, followee_id: int, now: int | None = None) -> bool | None:
    """Follow a user: True if new, False if already followed, None if either user does not exist.

    Callers reject following oneself (the HTTP parser answers 400).
    """
    created_at = int(time.time()) if now is None else now
    pair = (follower_id, followee_id)
    return await _insert_pair(engine, FOLLOW_CHECK, pair + pair, INSERT_FOLLOW, (*pair, created_at))


async def _insert_pair(
    engine: Engine, check: str, check_args: tuple[int, ...], insert: str, insert_args: tuple[int, ...]
) -> bool | None:
    """Insert a (user, thing) pair once: `check` answers (both ends found: 2, the pair already there)."""
    try:
        async with engine.transaction() as session:
            found, already = await session.fetch_one(check, check_args)  # type: ignore[misc]
            if found != 2:
                return None
            if already:
                return False
            await session.execute(insert, insert_args)
    except DuplicateKey:  # another request inserted the same pair after our check
        return False
    return True
