"""The tables of Chirp, the social app of "SQLite handled 315 million daily requests on a laptop".

Four tables, as the post describes them: users, posts, follows and likes. Ids and timestamps are
plain integers (unix seconds) so that the same rows are byte-identical on every engine.

Indexes, each there for one query in `operations.py` (docs/chirp.md has the plans):
  users_handle          GET /u/{handle}: the user by handle; unique, as a handle names one user.
  posts_user_created    a user's posts newest first: the profile page reads it directly, and the
                        timeline reads it once per followee. It ends with the id so that
                        PostgreSQL answers from the index alone (InnoDB and SQLite keep the
                        primary key in every secondary index anyway).
  likes_post            the like count of one post: an index range of its likes.
The primary keys cover the rest: follows (follower_id, followee_id) is "whom a user follows",
likes (user_id, post_id) makes a like unique and answers "did this user like it". Both tables are
clustered (SQLite: WITHOUT ROWID): their rows are a pair of ids and a timestamp, kept once, in the
key's B-tree, rather than twice (docs/chirp.md: likes load in 3.3 s instead of 4.5, 150 MB
instead of 248).
"""

from __future__ import annotations

from ...engines.base import Column, Index, Schema, Table

HANDLE_LENGTH = 32
NAME_LENGTH = 64
BIO_LENGTH = 160
BODY_LENGTH = 280  # the classic short-post limit

SCHEMA = Schema(
    tables=(
        Table(
            "users",
            (
                Column("id", "bigint"),
                Column("handle", "text", max_length=HANDLE_LENGTH),
                Column("name", "text", max_length=NAME_LENGTH),
                Column("bio", "text", max_length=BIO_LENGTH),
                Column("created_at", "bigint"),
            ),
            primary_key=("id",),
        ),
        Table(
            "posts",
            (
                Column("id", "bigint", generated_id=True),
                Column("user_id", "bigint"),
                Column("body", "text", max_length=BODY_LENGTH),
                Column("created_at", "bigint"),
            ),
            primary_key=("id",),
        ),
        Table(
            "follows",
            (
                Column("follower_id", "bigint"),
                Column("followee_id", "bigint"),
                Column("created_at", "bigint"),
            ),
            primary_key=("follower_id", "followee_id"),
            clustered=True,
        ),
        Table(
            "likes",
            (
                Column("user_id", "bigint"),
                Column("post_id", "bigint"),
                Column("created_at", "bigint"),
            ),
            primary_key=("user_id", "post_id"),
            clustered=True,
        ),
    ),
    indexes=(
        Index("users_handle", "users", ("handle",), unique=True),
        Index("posts_user_created", "posts", ("user_id", "created_at", "id")),
        Index("likes_post", "likes", ("post_id",)),
    ),
)
