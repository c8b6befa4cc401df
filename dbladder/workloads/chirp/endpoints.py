"""Chirp's operations in the workload interface: per operation, how a request is parsed, drawn,
rendered and answered, and what an acknowledged write leaves for the integrity check.

    post_by_id   GET /post/{id}
    profile      GET /u/{handle}
    timeline     GET /timeline/{user_id}      weight 0.95
    create_post  POST /post                   weight 0.015
    like         POST /like                   weight 0.03
    follow       POST /follow                 weight 0.005

The weights are the post's mixed round ("SQLite handled 315 million daily requests on a laptop"):
95 % timeline reads and 5 % writes. The post does not say which writes; they are split as a
social app's tend to go, 3 % likes, 1.5 % new posts, 0.5 % follows. The other rounds (each page
alone) are presets (`presets.py`).

Every draw names rows that exist, so no generated request is answered 404: a like or a follow
that is there already answers 200 ("new": false), a new one 201.
"""

from __future__ import annotations

import zlib
from typing import Annotated, Any

import msgspec

from ...engines.base import Engine
from ...errors import InvalidRequest
from ..base import Answer, Args, Draw, HttpRequest, Operation, Sizes
from ..parsing import MAX_ID, decode_body, not_found, parse_id
from . import operations
from .data import handle_of, post_bodies
from .schema import BODY_LENGTH, HANDLE_LENGTH

HANDLE_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
MIXED = {"timeline": 0.95, "like": 0.03, "create_post": 0.015, "follow": 0.005}


# ---------------------------------------------------------------------------------------------
# Input checks: every failure is InvalidRequest, which the service answers with 400.

Id = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]


class NewPost(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    user_id: Id
    body: Annotated[str, msgspec.Meta(min_length=1, max_length=BODY_LENGTH)]


class NewLike(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    user_id: Id
    post_id: Id


class NewFollow(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    follower_id: Id
    followee_id: Id


_decoders: dict[type[Any], Any] = {kind: msgspec.json.Decoder(kind) for kind in (NewPost, NewLike, NewFollow)}
encode = msgspec.json.Encoder().encode


def _decode(kind: type[Any], body: bytes) -> Any:
    return decode_body(body, _decoders[kind], kind.__name__)


def parse_handle(text: str) -> str:
    """A handle: 1 to 32 letters, digits or underscores."""
    if 1 <= len(text) <= HANDLE_LENGTH and HANDLE_CHARACTERS.issuperset(text):
        return text
    raise InvalidRequest(
        f"a handle is 1 to {HANDLE_LENGTH} letters, digits or underscores, not {text[:40]!r}"
    )


# ---------------------------------------------------------------------------------------------
# The operations, each as parse / draw / render / run (and acknowledge, for a write).


def parse_post_by_id(request: HttpRequest) -> Args:
    return (parse_id(request.params["id"], "the post id"),)


def draw_post_by_id(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["posts"]),)


def render_post_by_id(args: Args) -> tuple[str, bytes | None]:
    return f"/post/{args[0]}", None


async def run_post_by_id(engine: Engine, args: Args) -> Answer:
    post = await operations.post_by_id(engine, args[0])
    return Answer(200, post) if post else Answer(404, not_found(f"no post with id {args[0]}"))


def parse_profile(request: HttpRequest) -> Args:
    return (parse_handle(request.params["handle"]),)


def draw_profile(draw: Draw, sizes: Sizes) -> Args:
    return (handle_of(draw.id(sizes["users"])),)


def render_profile(args: Args) -> tuple[str, bytes | None]:
    return f"/u/{args[0]}", None


async def run_profile(engine: Engine, args: Args) -> Answer:
    page = await operations.profile(engine, args[0])
    return Answer(200, page) if page else Answer(404, not_found(f"no user with handle {args[0]!r}"))


def parse_timeline(request: HttpRequest) -> Args:
    return (parse_id(request.params["user_id"], "the user id"),)


def draw_timeline(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["users"]),)


def render_timeline(args: Args) -> tuple[str, bytes | None]:
    return f"/timeline/{args[0]}", None


async def run_timeline(engine: Engine, args: Args) -> Answer:
    return Answer(200, await operations.timeline(engine, args[0]))


def parse_create_post(request: HttpRequest) -> Args:
    post = _decode(NewPost, request.body)
    return (post.user_id, post.body)


def draw_create_post(draw: Draw, sizes: Sizes) -> Args:
    bodies = post_bodies()
    return (draw.id(sizes["users"]), str(bodies[draw.below(len(bodies))]))


def render_create_post(args: Args) -> tuple[str, bytes | None]:
    return "/post", encode({"user_id": args[0], "body": args[1]})


async def run_create_post(engine: Engine, args: Args) -> Answer:
    post = await operations.create_post(engine, args[0], args[1])
    return Answer(201, post) if post else Answer(404, not_found(f"no user with id {args[0]}"))


def acknowledge_create_post(args: Args, body: Any) -> tuple[Any, ...]:
    """(post id, author, created_at, crc32 of the text): enough to find the post and see it intact."""
    return (int(body["id"]), int(args[0]), int(body["created_at"]), body_crc(args[1]))


def body_crc(text: str) -> int:
    """The CRC-32 of a post's text, kept instead of the text (up to 280 characters) per write."""
    return zlib.crc32(text.encode())


def parse_like(request: HttpRequest) -> Args:
    new = _decode(NewLike, request.body)
    return (new.user_id, new.post_id)


def draw_like(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["users"]), draw.id(sizes["posts"]))


def render_like(args: Args) -> tuple[str, bytes | None]:
    return "/like", encode({"user_id": args[0], "post_id": args[1]})


async def run_like(engine: Engine, args: Args) -> Answer:
    made = await operations.like(engine, args[0], args[1])
    if made is None:
        return Answer(404, not_found(f"no user {args[0]} or no post {args[1]}"))
    return Answer(201 if made else 200, {"user_id": args[0], "post_id": args[1], "new": made})


def acknowledge_pair(args: Args, body: Any) -> tuple[Any, ...]:
    """A like or follow answered 200 or 201: the pair must be there after the run, new or not."""
    return (int(args[0]), int(args[1]))


def parse_follow(request: HttpRequest) -> Args:
    new = _decode(NewFollow, request.body)
    if new.follower_id == new.followee_id:
        raise InvalidRequest("a user cannot follow themselves")
    return (new.follower_id, new.followee_id)


def draw_follow(draw: Draw, sizes: Sizes) -> Args:
    follower = draw.id(sizes["users"])
    # Uniform over the other users: draw from U - 1 and step over the follower.
    followee = draw.id(sizes["users"] - 1)
    return (follower, followee + (followee >= follower))


def render_follow(args: Args) -> tuple[str, bytes | None]:
    return "/follow", encode({"follower_id": args[0], "followee_id": args[1]})


async def run_follow(engine: Engine, args: Args) -> Answer:
    made = await operations.follow(engine, args[0], args[1])
    if made is None:
        return Answer(404, not_found(f"no user {args[0]} or no user {args[1]}"))
    return Answer(201 if made else 200, {"follower_id": args[0], "followee_id": args[1], "new": made})


OPERATIONS = (
    Operation(
        "post_by_id",
        "GET",
        "/post/{id}",
        False,
        0.0,
        run_post_by_id,
        parse_post_by_id,
        draw_post_by_id,
        render_post_by_id,
        statements=(operations.POST_BY_ID,),
        description="a post with its author's handle and like count",
    ),
    Operation(
        "profile",
        "GET",
        "/u/{handle}",
        False,
        0.0,
        run_profile,
        parse_profile,
        draw_profile,
        render_profile,
        statements=(operations.USER_BY_HANDLE, operations.USER_POSTS),
        description="a user by handle and their 20 newest posts",
    ),
    Operation(
        "timeline",
        "GET",
        "/timeline/{user_id}",
        False,
        MIXED["timeline"],
        run_timeline,
        parse_timeline,
        draw_timeline,
        render_timeline,
        statements=(operations.TIMELINE,),
        description="the 20 newest posts of the people a user follows, each with its like count",
    ),
    Operation(
        "create_post",
        "POST",
        "/post",
        True,
        MIXED["create_post"],
        run_create_post,
        parse_create_post,
        draw_create_post,
        render_create_post,
        statements=(operations.USER_EXISTS, operations.INSERT_POST),
        acknowledge=acknowledge_create_post,
        description="a new post: the author checked, one INSERT, in one transaction",
    ),
    Operation(
        "like",
        "POST",
        "/like",
        True,
        MIXED["like"],
        run_like,
        parse_like,
        draw_like,
        render_like,
        statements=(operations.LIKE_CHECK, operations.INSERT_LIKE),
        acknowledge=acknowledge_pair,
        description="a like, once per user and post",
    ),
    Operation(
        "follow",
        "POST",
        "/follow",
        True,
        MIXED["follow"],
        run_follow,
        parse_follow,
        draw_follow,
        render_follow,
        statements=(operations.FOLLOW_CHECK, operations.INSERT_FOLLOW),
        acknowledge=acknowledge_pair,
        description="a follow, once per pair of users",
    ),
)
