"""Chirp's data generator, schema and queries, on real databases of every engine."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from dbladder.data.seeding import checksum, row_counts, seed
from dbladder.engines import opened
from dbladder.errors import InvalidConfig
from dbladder.workloads import chirp
from dbladder.workloads.base import DataSpec
from dbladder.workloads.chirp import data, endpoints, operations
from dbladder.workloads.chirp.schema import SCHEMA

TINY = chirp.ChirpConfig.at_scale(0.002, seed=5)  # 100 users, 2,000 posts
TINY_DATA = DataSpec(5, TINY.sizes)


async def seed_tiny(engine) -> None:
    await seed(engine, chirp.workload, TINY_DATA)


def all_rows(config: chirp.ChirpConfig) -> dict[str, list[tuple]]:
    return {table.name: [row for chunk in chunks for row in chunk] for table, chunks in data.generate(config)}


def test_the_post_cardinalities_at_scale_1() -> None:
    post = {"users": 50_000, "posts": 1_000_000, "follows": 2_498_799, "likes": 4_999_764}
    assert chirp.ChirpConfig.at_scale(1).planned_rows() == post
    assert chirp.workload.planned_rows(chirp.workload.scaled_sizes(1)) == post
    assert dict(chirp.workload.sizes) == {"users": 50_000, "posts": 1_000_000}
    # Follows and likes follow the users: the post's 49.98 and 99.995 per user.
    assert chirp.workload.planned_rows({"users": 500, "posts": 10}) == {
        "users": 500,
        "posts": 10,
        "follows": 24_988,
        "likes": 1_250,  # capped at a quarter of the 5,000 possible pairs
    }


def test_the_workload_generates_what_the_config_does() -> None:
    through_interface = {
        table.name: [row for chunk in chunks for row in chunk]
        for table, chunks in chirp.workload.generate(TINY_DATA)
    }
    assert through_interface == all_rows(TINY)


def test_sizes_are_checked_through_the_interface() -> None:
    assert chirp.workload.validate_sizes({"users": 100, "posts": 2_000}) == []
    assert chirp.workload.validate_sizes({"users": 1, "posts": 5}) == [
        "users must be from 2 to 100,000,000 (a follow needs two), not 1"
    ]
    assert chirp.workload.validate_sizes({"likes": 5})[0].startswith("chirp has no size likes")


def test_the_same_seed_gives_the_same_rows_whatever_the_chunk_size() -> None:
    one = all_rows(TINY)
    assert all_rows(TINY) == one
    small_chunks = chirp.ChirpConfig(**{**TINY.__dict__, "chunk_rows": 7})
    assert all_rows(small_chunks) == one
    other_seed = chirp.ChirpConfig(**{**TINY.__dict__, "seed": 6})
    assert all_rows(other_seed)["follows"] != one["follows"]


@pytest.mark.parametrize("scale", [0.0001, 0.002, 0.01])
def test_counts_are_the_formula_and_pairs_are_unique(scale: float) -> None:
    config = chirp.ChirpConfig.at_scale(scale)
    rows = all_rows(config)
    assert {name: len(table) for name, table in rows.items()} == config.planned_rows()
    follows = [(a, b) for a, b, _ in rows["follows"]]
    likes = [(u, p) for u, p, _ in rows["likes"]]
    assert len(set(follows)) == len(follows) and len(set(likes)) == len(likes)
    assert all(a != b and 1 <= b <= config.users for a, b in follows)
    assert all(1 <= p <= config.posts for _, p in likes)
    # Emitted in primary-key order, the cheapest order for a B-tree keyed that way.
    assert follows == sorted(follows) and likes == sorted(likes)
    handles = [row[1] for row in rows["users"]]
    assert len(set(handles)) == len(handles)


def test_shares_add_up_exactly_and_spread() -> None:
    shares = data._shares(1, "follow", 50_000, 2_498_799)
    assert int(shares.sum()) == 2_498_799
    assert shares.max() <= 101 and abs(shares.mean() - 49.976) < 0.001


def test_handles_one_at_a_time_match_the_generated_ones() -> None:
    users = all_rows(TINY)["users"]
    assert [data.handle_of(row[0]) for row in users] == [row[1] for row in users]


def test_post_timestamps_rise_with_the_id() -> None:
    posts = all_rows(TINY)["posts"]
    stamps = [row[3] for row in posts]
    assert stamps == sorted(stamps) and stamps[0] == data.POSTS_FROM


def test_invalid_sizes_list_every_problem() -> None:
    with pytest.raises(InvalidConfig) as raised:
        chirp.ChirpConfig(users=1, posts=0, seed=-1).checked()
    assert len(raised.value.problems) == 3
    with pytest.raises(InvalidConfig, match="more than the 9 there are to follow"):
        chirp.ChirpConfig(users=10, posts=10, follows=80, likes=0).checked()


def expected_checksum(config: chirp.ChirpConfig) -> dict[str, str]:
    digests = {}
    for table, chunks in chirp.generate(config):
        index = [table.column_names.index(name) for name in table.primary_key]
        rows = sorted((row for chunk in chunks for row in chunk), key=lambda row: [row[i] for i in index])
        digest = hashlib.sha256()
        for row in rows:
            digest.update(("\x1f".join(str(v) for v in row) + "\n").encode())
        digests[table.name] = digest.hexdigest()
    return digests


def test_every_engine_holds_byte_identical_rows(any_url: str) -> None:
    async def main() -> tuple[dict[str, str], dict[str, int]]:
        async with opened(any_url) as engine:
            await seed_tiny(engine)
            await chirp.workload.check_sql(engine)
            return await checksum(engine, SCHEMA), await row_counts(engine, SCHEMA)

    checksums, counts = asyncio.run(main())
    assert counts == TINY.planned_rows()
    assert checksums == expected_checksum(TINY)


# A hand-built network: user 1 follows 2 and 3; user 4 follows nobody.
HAND_USERS = [(i, f"u{i}", f"User {i}", "", 1_600_000_000 + i) for i in range(1, 5)]
HAND_POSTS = [
    # id, author, body, created_at: out of id order on purpose, and two posts at the same second.
    (1, 2, "two old", 100),
    (2, 3, "three mid", 200),
    (3, 4, "four's, not followed", 900),
    (4, 2, "two new", 300),
    (5, 3, "three tie low id", 300),
    (6, 1, "own post", 950),
]
HAND_FOLLOWS = [(1, 2, 10), (1, 3, 10), (2, 1, 10)]
HAND_LIKES = [(1, 4, 1), (3, 4, 1), (4, 4, 1), (2, 2, 1), (4, 3, 1)]


async def hand_built(engine) -> None:
    await engine.recreate_schema(SCHEMA)
    for name, rows in (
        ("users", HAND_USERS),
        ("posts", HAND_POSTS),
        ("follows", HAND_FOLLOWS),
        ("likes", HAND_LIKES),
    ):
        await engine.bulk_load(SCHEMA.table(name), rows)
    await engine.finish_load(SCHEMA)


def test_timeline_known_answer(any_url: str) -> None:
    async def main():
        async with opened(any_url) as engine:
            await hand_built(engine)
            return (
                await operations.timeline(engine, 1),
                await operations.timeline(engine, 4),
                await operations.timeline(engine, 999),
            )

    ones, nobody, missing = asyncio.run(main())
    # Newest first; at the same second the higher id first; user 4's and user 1's own posts left out.
    assert [(p["id"], p["handle"], p["likes"]) for p in ones] == [
        (5, "u3", 0),
        (4, "u2", 3),
        (2, "u3", 1),
        (1, "u2", 0),
    ]
    assert ones[1] == {
        "id": 4,
        "user_id": 2,
        "handle": "u2",
        "body": "two new",
        "created_at": 300,
        "likes": 3,
    }
    assert nobody == [] and missing == []


def test_pages_and_writes_known_answers(any_url: str) -> None:
    async def main():
        async with opened(any_url) as engine:
            await hand_built(engine)
            post = await operations.post_by_id(engine, 4)
            absent = await operations.post_by_id(engine, 99)
            page = await operations.profile(engine, "u2")
            new = await operations.create_post(engine, 4, "hello", now=2_000)
            orphan = await operations.create_post(engine, 99, "nobody")
            likes = [
                await operations.like(engine, 1, 6, now=5),
                await operations.like(engine, 1, 6, now=6),
                await operations.like(engine, 1, 99),
            ]
            follows = [
                await operations.follow(engine, 1, 4, now=5),
                await operations.follow(engine, 1, 4, now=6),
                await operations.follow(engine, 1, 99),
            ]
            timeline = await operations.timeline(engine, 1)
            return post, absent, page, new, orphan, likes, follows, timeline

    post, absent, page, new, orphan, likes, follows, timeline = asyncio.run(main())
    assert post == {"id": 4, "user_id": 2, "handle": "u2", "body": "two new", "created_at": 300, "likes": 3}
    assert absent is None
    assert page["user"]["id"] == 2 and [p["id"] for p in page["posts"]] == [4, 1]
    assert new == {"id": 7, "user_id": 4, "created_at": 2_000} and orphan is None
    assert likes == [True, False, None] and follows == [True, False, None]
    # Following user 4 brings their posts, the new one first.
    assert [p["id"] for p in timeline[:2]] == [7, 3]


def test_sqlite_plans_search_indexes_and_scan_no_table(sqlite_url: str) -> None:
    async def main():
        async with opened(sqlite_url) as engine:
            await seed_tiny(engine)
            plans = {}
            async with engine.read() as session:
                for name, sql, args in (
                    ("timeline", operations.TIMELINE, (1,)),
                    ("post", operations.POST_BY_ID, (1,)),
                    ("profile", operations.USER_BY_HANDLE, ("x",)),
                    ("user_posts", operations.USER_POSTS, (1,)),
                ):
                    plans[name] = [
                        row[3] for row in await session.fetch_all("EXPLAIN QUERY PLAN " + sql, args)
                    ]
            return plans

    plans = asyncio.run(main())
    for name, steps in plans.items():
        # The derived table t is the 20 ids the inner query picked: scanning it is bounded.
        scans = [s for s in steps if s.startswith("SCAN") and s not in ("SCAN t", "SCAN CONSTANT ROW")]
        assert scans == [], (name, steps)
    assert any("posts_user_created" in s for s in plans["timeline"])
    assert any("likes_post" in s for s in plans["timeline"])
    assert not any("TEMP B-TREE" in s for s in plans["user_posts"])


def test_a_like_that_lost_a_race_answers_already_on_every_engine(any_url: str) -> None:
    """The check finds no like, then the insert meets one a concurrent request made meanwhile: the
    engine's DuplicateKey, answered as "already there" (False), not as an error."""

    async def main() -> tuple[bool | None, int]:
        async with opened(any_url) as engine:
            await hand_built(engine)
            # The race, made certain: the check's answer says the pair is missing.
            raced = operations.LIKE_CHECK.replace("AND post_id = ?)", "AND post_id = ? AND 1 = 0)")
            made = await operations._insert_pair(
                engine, raced, (1, 4, 1, 4), operations.INSERT_LIKE, (1, 4, 9)
            )
            async with engine.read() as session:
                count = await session.fetch_one(
                    "SELECT count(*) FROM likes WHERE user_id = 1 AND post_id = 4"
                )
        return made, count[0]  # type: ignore[index]

    assert asyncio.run(main()) == (False, 1)


def test_verify_finds_lost_and_corrupted_writes_and_broken_invariants(any_url: str) -> None:
    async def main() -> tuple[dict, dict]:
        async with opened(any_url) as engine:
            await seed_tiny(engine)
            by_name = {op.name: op for op in chirp.workload.operations}
            acknowledged: dict[str, list[tuple]] = {"create_post": [], "like": [], "follow": []}
            for name, args in (
                ("create_post", (3, "hello")),
                ("create_post", (4, "again")),
                ("like", (1, 1)),
                ("follow", (1, 100)),
            ):
                answer = await by_name[name].run(engine, args)
                assert answer.status in (200, 201)
                acknowledged[name].append(by_name[name].acknowledge(args, answer.body))  # type: ignore[misc]
            clean = await chirp.workload.verify(engine, TINY_DATA, acknowledged)
            lost_post = acknowledged["create_post"][0][0]
            async with engine.transaction() as session:
                await session.execute("DELETE FROM posts WHERE id = ?", (lost_post,))
                await session.execute("UPDATE posts SET body = ? WHERE id = ?", ("changed", lost_post + 1))
                await session.execute("DELETE FROM likes WHERE user_id = ? AND post_id = ?", (1, 1))
                await session.execute("INSERT INTO follows VALUES (?, ?, ?)", (7, 7, 1))
                await session.execute("INSERT INTO likes VALUES (?, ?, ?)", (8, 10**6, 1))
                await session.execute("DELETE FROM posts WHERE id = ?", (5,))
            broken = await chirp.workload.verify(engine, TINY_DATA, acknowledged)
        return clean, broken

    clean, broken = asyncio.run(main())
    assert (clean["acknowledged"], clean["present"], clean["lost"], clean["corrupted"]) == (4, 4, 0, 0)
    assert (clean["violations"], clean["invariant_checks"], clean["checked"]) == ([], 13, True)
    assert (broken["lost"], broken["corrupted"]) == (2, 1)
    likes_on_5 = sum(1 for _, post_id, _ in all_rows(TINY)["likes"] if post_id == 5)
    assert broken["violations"] == [
        "self-follows: 1",
        f"likes of a post that does not exist: {1 + likes_on_5}",
        "seeded posts missing: 1 of 2,000",
    ]


def test_verify_looks_up_writes_in_batches_and_counts_each_acknowledgement(any_url: str) -> None:
    from dbladder.workloads.chirp.verify import BATCH

    async def main() -> tuple[dict, int, int]:
        async with opened(any_url) as engine:
            await seed_tiny(engine)
            async with engine.read() as session:
                posts = await session.fetch_all("SELECT id, user_id, created_at, body FROM posts ORDER BY id")
                likes = [
                    tuple(pair)
                    for pair in await session.fetch_all("SELECT user_id, post_id FROM likes ORDER BY 1, 2")
                ]
            # Every seeded post and like acknowledged, more than one batch of each (the last one
            # padded), and one like acknowledged twice (answered "already" the second time).
            acknowledged = {
                "create_post": [(p[0], p[1], p[2], endpoints.body_crc(str(p[3]))) for p in posts],
                "like": [*likes, likes[-1]],
                "follow": [],
            }
            assert len(posts) > 3 * BATCH and len(likes) > BATCH
            gone, changed = posts[-1][0], posts[BATCH + 7][0]
            async with engine.transaction() as session:
                await session.execute("DELETE FROM likes WHERE post_id = ?", (gone,))
                await session.execute("DELETE FROM posts WHERE id = ?", (gone,))
                await session.execute("UPDATE posts SET body = ? WHERE id = ?", ("changed", changed))
                await session.execute("DELETE FROM likes WHERE user_id = ? AND post_id = ?", likes[-1])
            deleted = {pair for pair in likes if pair[1] == gone} | {likes[-1]}
            lost_likes = sum(1 for pair in acknowledged["like"] if pair in deleted)
            result = await chirp.workload.verify(engine, TINY_DATA, acknowledged)
            return result, lost_likes, len(posts) + len(likes) + 1

    result, lost_likes, acknowledged = asyncio.run(main())
    assert lost_likes >= 2  # the like deleted on purpose, acknowledged twice
    assert (result["acknowledged"], result["lost"], result["corrupted"]) == (acknowledged, 1 + lost_likes, 1)
    assert result["present"] == acknowledged - 1 - lost_likes


def test_body_checksum_is_what_verify_compares() -> None:
    assert endpoints.body_crc("hello") == 907060870
