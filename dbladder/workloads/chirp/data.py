"""Chirp's seed data: deterministic from (seed, sizes) alone, identical on every engine.

At scale 1 the data set has the post's cardinalities exactly: 50,000 users, 1,000,000 posts,
2,498,799 follows and 4,999,764 likes. Every value is a function of the seed and a row's own
key (splitmix64, vectorised with numpy; uint64 arithmetic wraps, which is what the hash wants),
so any chunk can be made on its own and the chunk size changes nothing.

How the relations are drawn, and why:
  posts      author uniform over the users; created_at rises with the id over one year, so
             "newest first" is also "highest id first" and a new post (stamped now) is newer
             than every seeded one.
  follows    each user gets a share of the exact total in proportion to a weight from 1 to 199
             (shares are differences of floor(total * cumulative weight / all weight), so they
             add up exactly); user u follows the k_u users at positions a, a + s, a + 2s, ...
             modulo (users - 1) among the others, with s coprime to (users - 1): k_u distinct
             positions, none of them u itself. No duplicate can arise, so nothing is rejected
             and redrawn, and the counts are what the formula says.
  likes      the same over the posts: k_u distinct posts per user, so (user, post) is unique.
Rows of follows and likes are emitted in primary-key order, which is the cheapest order to
insert into a B-tree keyed that way (InnoDB's clustered index, SQLite's key index).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...engines.base import Row, Table
from ...errors import InvalidConfig
from .. import hashing
from .schema import SCHEMA

# The post's cardinalities ("SQLite handled 315 million daily requests on a laptop").
POST_ROWS = {"users": 50_000, "posts": 1_000_000, "follows": 2_498_799, "likes": 4_999_764}
SIZES = {"users": POST_ROWS["users"], "posts": POST_ROWS["posts"]}
"""The workload's size parameters at scale 1; follows and likes follow from users (`derived_rows`)."""

USERS_FROM = 1_668_000_000  # unix seconds: users signed up over the year before the first post
POSTS_FROM = 1_700_000_000  # the first post; the last one a year later
YEAR = 365 * 24 * 3600
FOLLOW_DELAY = 30 * 24 * 3600  # a follow comes up to a month after the follower signed up
LIKE_DELAY = 7 * 24 * 3600  # a like comes up to a week after the post
MAX_WEIGHT = 199  # per-user weights 1..199: a user follows (likes) 1/100 to 2x the average

_STREAMS = {
    "name_first": 1,
    "name_last": 2,
    "bio": 3,
    "author": 4,
    "body": 5,
    "follow_weight": 6,
    "follow_start": 7,
    "follow_stride": 8,
    "follow_time": 9,
    "like_weight": 10,
    "like_start": 11,
    "like_stride": 12,
    "like_time": 13,
    "handle": 14,
}

_HANDLE_WORDS = (
    "ana", "ben", "cleo", "dara", "eli", "fay", "gus", "hana", "ivo", "jun", "kai", "lena", "milo",
    "nia", "otto", "pia", "quin", "rosa", "sam", "tova", "uma", "vic", "wren", "xavi", "yara", "zed",
)  # fmt: skip
_FIRST_NAMES = (
    "Ana", "Bruno", "Carla", "Diego", "Elena", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Karin",
    "Lucas", "Marta", "Nils", "Olga", "Pablo", "Rita", "Simon", "Tanja", "Victor", "Wanda", "Yusuf",
)  # fmt: skip
_LAST_NAMES = (
    "Alvarez", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Hansen", "Ivanova",
    "Jansen", "Kowalski", "Lopez", "Moreau", "Novak", "Olsen", "Petrov", "Rossi", "Silva", "Tanaka",
)  # fmt: skip
_BIOS = (
    "Writes code, drinks coffee.", "Databases by day, bread by night.", "Here for the timeline.",
    "Runner, reader, occasional poster.", "Opinions are my cat's.", "Building things on the web.",
    "Mostly photos of the sea.", "Learning in public.", "Small apps, big dreams.", "",
)  # fmt: skip
_OPENINGS = (
    "Just shipped", "Thinking about", "Hot take on", "Finally tried", "Still debugging",
    "Reading about", "Benchmarking", "Migrating to", "Can't stop using", "Rewrote", "Loving",
    "Giving up on", "Half way through", "Wrote a post on", "Deleted", "Asked my team about",
)  # fmt: skip
_SUBJECTS = (
    "SQLite", "a single file", "write-ahead logging", "the query planner", "an index", "my laptop",
    "connection pools", "the page cache", "a tiny VPS", "Postgres", "backups", "my side project",
    "a covering index", "the timeline query", "NVMe disks", "one writer", "busy timeouts",
    "prepared statements", "a cold cache", "the morning standup",
)  # fmt: skip
_ENDINGS = (
    "and it was fine.", "and nothing broke.", "- more soon.", "and I have questions.",
    "at 3 am.", "in under a second.", "with zero regrets.", "and my CPU is bored.",
    "and the graphs look great.", "because why not.", "on a Tuesday.", "and learned a lot.",
)  # fmt: skip
_TAGS = ("sqlite", "databases", "webdev", "performance", "devlife", "shipit", "python", "backend")


def _below(seed: int, stream: str, index: np.ndarray, bound: int) -> np.ndarray:
    """A value from 0 to bound-1 per index, as int64 (splitmix64, `hashing.py`)."""
    return hashing.below(seed, _STREAMS[stream], index, bound)


def handle_of(user_id: int) -> str:
    """A user's handle: a word and the id, so unique; the same for every seed, so a load generator
    can name a user's profile page knowing only the number of users."""
    return f"{_HANDLE_WORDS[hashing.hash_one(0, _STREAMS['handle'], user_id) % len(_HANDLE_WORDS)]}{user_id}"


def _handles(ids: np.ndarray) -> list[str]:
    words = _below(0, "handle", ids, len(_HANDLE_WORDS)).tolist()
    return [f"{_HANDLE_WORDS[w]}{i}" for w, i in zip(words, ids.tolist(), strict=True)]


@cache
def post_bodies() -> np.ndarray:
    """Every post body the generator writes (4,096 of them), as an object array to index into."""
    texts = [
        f"{opening} {subject} {ending} #{tag}"
        for opening in _OPENINGS
        for subject in _SUBJECTS[:16]
        for ending in _ENDINGS[:8]
        for tag in _TAGS[:2]
    ]
    return np.array(texts, dtype=object)


def derived_rows(users: int, posts: int) -> tuple[int, int]:
    """(follows, likes) for a data set of `users` and `posts`: the post's follows and likes per user
    (49.98 and 99.995), so the post's exact counts at 50,000 users.

    Each is capped at a quarter of all possible pairs, so that a user at twice the average still
    has enough distinct users (posts) to follow (like) in tiny data sets.
    """
    per_user = POST_ROWS["users"]
    follows = (POST_ROWS["follows"] * users + per_user // 2) // per_user
    likes = (POST_ROWS["likes"] * users + per_user // 2) // per_user
    return min(follows, users * (users - 1) // 4), min(likes, users * posts // 4)


@dataclass(frozen=True)
class ChirpConfig:
    """The size of Chirp's data set and the seed that decides its rows."""

    users: int = POST_ROWS["users"]
    posts: int = POST_ROWS["posts"]
    follows: int = POST_ROWS["follows"]
    likes: int = POST_ROWS["likes"]
    seed: int = 1
    chunk_rows: int = 50_000

    @classmethod
    def of(cls, users: int, posts: int, seed: int = 1) -> ChirpConfig:
        """The data set of `users` and `posts`, with the follows and likes they derive."""
        follows, likes = derived_rows(users, posts)
        return cls(users=users, posts=posts, follows=follows, likes=likes, seed=seed)

    @classmethod
    def at_scale(cls, scale: float, seed: int = 1) -> ChirpConfig:
        """The post's data set times `scale` (0.01 is 500 users and 10,000 posts)."""
        return cls.of(max(2, round(SIZES["users"] * scale)), max(1, round(SIZES["posts"] * scale)), seed)

    def validate(self) -> list[str]:
        """Every problem with the sizes, each naming its field; empty when they are usable."""
        problems = []
        if not 2 <= self.users <= 100_000_000:
            problems.append(f"users must be from 2 to 100,000,000 (a follow needs two), not {self.users}")
        if not 1 <= self.posts <= 1_000_000_000:
            problems.append(f"posts must be from 1 to 1,000,000,000, not {self.posts}")
        if not 0 <= self.seed < 2**63:
            problems.append(f"seed must be from 0 to 2**63-1, not {self.seed}")
        if not 1 <= self.chunk_rows <= 10_000_000:
            problems.append(f"chunk_rows must be from 1 to 10,000,000, not {self.chunk_rows}")
        for name, total in (("follows", self.follows), ("likes", self.likes)):
            # total * cumulative weight must fit in int64 (`_shares`).
            if not 0 <= total <= 2**62 // (MAX_WEIGHT * max(self.users, 1)):
                problems.append(
                    f"{name} must be from 0 to {2**62 // (MAX_WEIGHT * self.users):,}, not {total}"
                )
        if problems:
            return problems
        # The largest share must fit among the distinct targets; checked on the actual shares.
        for name, total, room in (
            ("follows", self.follows, self.users - 1),
            ("likes", self.likes, self.posts),
        ):
            most = int(_shares(self.seed, name[:-1], self.users, total).max(initial=0))
            if most > room:
                problems.append(
                    f"{name}={total:,} gives one user {most:,}, more than the {room:,} there are to "
                    f"{name[:-1]}; lower {name} or raise users/posts"
                )
        return problems

    def checked(self) -> ChirpConfig:
        """This config, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    def planned_rows(self) -> dict[str, int]:
        """The exact row count of every table."""
        return {"users": self.users, "posts": self.posts, "follows": self.follows, "likes": self.likes}

    @property
    def sizes(self) -> dict[str, int]:
        """The size parameters, as the workload interface passes them around."""
        return {"users": self.users, "posts": self.posts}


def _shares(seed: int, kind: str, users: int, total: int) -> np.ndarray:
    """How many of `total` follows (kind "follow") or likes ("like") each user 1..U makes; they add
    up to `total` exactly."""
    ids = np.arange(1, users + 1, dtype=np.int64)
    weights = 1 + _below(seed, f"{kind}_weight", ids, MAX_WEIGHT)
    cumulative = np.cumsum(weights)
    bounds = (np.int64(total) * cumulative) // cumulative[-1]
    return np.diff(bounds, prepend=np.int64(0))


@cache
def _coprimes(n: int) -> np.ndarray:
    """Every stride from 1 to n-1 whose steps visit all n positions before repeating (gcd 1 with n)."""
    if n <= 1:
        return np.ones(1, dtype=np.int64)
    candidates = np.arange(1, n, dtype=np.int64)
    return candidates[np.gcd(candidates, n) == 1]


def _user_chunks(config: ChirpConfig, shares: np.ndarray) -> Iterator[np.ndarray]:
    """Consecutive ranges of user ids whose rows add up to about `chunk_rows`."""
    ends = np.searchsorted(np.cumsum(shares), np.arange(config.chunk_rows, shares.sum(), config.chunk_rows))
    start = 0
    for end in [*ends.tolist(), len(shares) - 1]:
        if end + 1 > start:
            yield np.arange(start + 1, end + 2, dtype=np.int64)
            start = end + 1


def _pairs(
    config: ChirpConfig, kind: str, users: np.ndarray, shares: np.ndarray, targets: int
) -> tuple[np.ndarray, np.ndarray]:
    """(owner, position) of every pair made by `users`: shares[u] distinct positions in 0..targets-1
    per user, along the user's own arithmetic progression; sorted by (owner, position)."""
    counts = shares[users - 1]
    owners = np.repeat(users, counts)
    # j = the pair's place within its owner's run: 0, 1, ... counts[u] - 1.
    first_of_run = np.cumsum(counts) - counts
    steps = np.arange(len(owners), dtype=np.int64) - np.repeat(first_of_run, counts)
    strides = _coprimes(targets)
    start = np.repeat(_below(config.seed, f"{kind}_start", users, targets), counts)
    stride = np.repeat(strides[_below(config.seed, f"{kind}_stride", users, len(strides))], counts)
    positions = (start + steps * stride) % targets
    order = np.lexsort((positions, owners))
    return owners[order], positions[order]


def user_created_at(ids: np.ndarray, users: int) -> np.ndarray:
    return USERS_FROM + (ids - 1) * (POSTS_FROM - USERS_FROM) // users


def post_created_at(ids: np.ndarray, posts: int) -> np.ndarray:
    """Rises with the id over one year from POSTS_FROM; posts made later are stamped with now."""
    return POSTS_FROM + (ids - 1) * YEAR // posts


def user_rows(config: ChirpConfig) -> Iterator[list[Row]]:
    """Chunks of (id, handle, name, bio, created_at)."""
    for start in range(1, config.users + 1, config.chunk_rows):
        ids = np.arange(start, min(start + config.chunk_rows, config.users + 1), dtype=np.int64)
        first = _below(config.seed, "name_first", ids, len(_FIRST_NAMES)).tolist()
        last = _below(config.seed, "name_last", ids, len(_LAST_NAMES)).tolist()
        bios = _below(config.seed, "bio", ids, len(_BIOS)).tolist()
        yield list(
            zip(
                ids.tolist(),
                _handles(ids),
                [f"{_FIRST_NAMES[f]} {_LAST_NAMES[s]}" for f, s in zip(first, last, strict=True)],
                [_BIOS[b] for b in bios],
                user_created_at(ids, config.users).tolist(),
                strict=True,
            )
        )


def post_rows(config: ChirpConfig) -> Iterator[list[Row]]:
    """Chunks of (id, user_id, body, created_at)."""
    bodies = post_bodies()
    for start in range(1, config.posts + 1, config.chunk_rows):
        ids = np.arange(start, min(start + config.chunk_rows, config.posts + 1), dtype=np.int64)
        authors = 1 + _below(config.seed, "author", ids, config.users)
        texts = bodies[_below(config.seed, "body", ids, len(bodies))]
        yield list(
            zip(
                ids.tolist(),
                authors.tolist(),
                texts.tolist(),
                post_created_at(ids, config.posts).tolist(),
                strict=True,
            )
        )


def follow_rows(config: ChirpConfig) -> Iterator[list[Row]]:
    """Chunks of (follower_id, followee_id, created_at), in primary-key order."""
    shares = _shares(config.seed, "follow", config.users, config.follows)
    others = config.users - 1
    for users in _user_chunks(config, shares):
        followers, positions = _pairs(config, "follow", users, shares, others)
        # Position p among the others is user p + 1, or p + 2 from the follower's own id on.
        followees = positions + 1
        followees += followees >= followers
        delay = _below(config.seed, "follow_time", followers * (config.users + 1) + followees, FOLLOW_DELAY)
        created = user_created_at(followers, config.users) + delay
        yield list(zip(followers.tolist(), followees.tolist(), created.tolist(), strict=True))


def like_rows(config: ChirpConfig) -> Iterator[list[Row]]:
    """Chunks of (user_id, post_id, created_at), in primary-key order."""
    shares = _shares(config.seed, "like", config.users, config.likes)
    for users in _user_chunks(config, shares):
        likers, positions = _pairs(config, "like", users, shares, config.posts)
        posts = positions + 1
        delay = 1 + _below(config.seed, "like_time", likers * (config.posts + 1) + posts, LIKE_DELAY)
        created = post_created_at(posts, config.posts) + delay
        yield list(zip(likers.tolist(), posts.tolist(), created.tolist(), strict=True))


def generate(config: ChirpConfig) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
    """(table, chunks of rows) for every table, in load order."""
    config = config.checked()
    yield SCHEMA.table("users"), user_rows(config)
    yield SCHEMA.table("posts"), post_rows(config)
    yield SCHEMA.table("follows"), follow_rows(config)
    yield SCHEMA.table("likes"), like_rows(config)
