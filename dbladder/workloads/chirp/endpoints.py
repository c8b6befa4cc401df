"""Chirp's HTTP face: per operation, how a request is parsed, drawn, rendered and answered.

Written as plain functions in the shape of the workload interface's `Operation` (docs/chirp.md):
`SPECS` holds one `Spec` per operation whose fields are the interface's, so the workload wraps
each as `Operation(**spec._asdict())`. The request, the random source and the answer are taken
structurally (`Request`, `Draw` below; a run function returns `(status, body)`), so the
interface's own classes fit them without this module importing them.

The mixes are the post's rounds ("SQLite handled 315 million daily requests on a laptop"): each
page alone, and the mixed round of 95 % timeline reads and 5 % writes. The post does not say which
writes; we split them as a social app's tend to go: 3 % likes, 1.5 % new posts, 0.5 % follows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, NamedTuple, Protocol

import msgspec

from ...engines.base import Engine
from ...errors import InvalidRequest
from . import operations
from .data import handle_of, post_bodies
from .schema import BODY_LENGTH, HANDLE_LENGTH

Args = tuple[Any, ...]
Sizes = Mapping[str, int]
Result = tuple[int, Any]  # (HTTP status, JSON-able body): the interface's Answer(status, body)

MAX_ID = 2**63 - 1  # the largest BIGINT on every engine
MAX_BODY_BYTES = 4_096
HANDLE_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

MIXES: dict[str, dict[str, float]] = {
    "mixed": {"timeline": 0.95, "like": 0.03, "create_post": 0.015, "follow": 0.005},
    "post": {"post_by_id": 1.0},
    "profile": {"profile": 1.0},
    "timeline": {"timeline": 1.0},
}
DEFAULT_MIX = "mixed"


class Request(Protocol):
    """What a parser reads: the interface's HttpRequest."""

    @property
    def params(self) -> Mapping[str, str]: ...
    @property
    def query(self) -> str: ...
    @property
    def body(self) -> bytes: ...


class Draw(Protocol):
    """The generator's random source: the interface's Draw."""

    def random(self) -> float: ...
    def below(self, n: int) -> int: ...
    def id(self, n: int) -> int: ...


class Spec(NamedTuple):
    """One operation, field for field the interface's `Operation`."""

    name: str
    method: str
    route: str
    write: bool
    weight: float
    statements: tuple[str, ...]
    run: Callable[[Engine, Args], Awaitable[Result]]
    parse: Callable[[Request], Args]
    draw: Callable[[Draw, Sizes], Args]
    render: Callable[[Args], tuple[str, bytes | None]]
    acknowledge: Callable[[Any], tuple[Any, ...]] | None = None


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


_decoders = {kind: msgspec.json.Decoder(kind) for kind in (NewPost, NewLike, NewFollow)}
encode = msgspec.json.Encoder().encode


def _decode(kind: type[Any], body: bytes) -> Any:
    if len(body) > MAX_BODY_BYTES:
        raise InvalidRequest(f"the body is larger than {MAX_BODY_BYTES} bytes")
    try:
        return _decoders[kind].decode(body)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"invalid {kind.__name__}: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from None


def parse_id(text: str, what: str) -> int:
    """A path segment as a positive 63-bit id, or InvalidRequest naming `what`."""
    # isascii() first: str.isdigit() also accepts digits such as '²' that int() refuses.
    if text.isascii() and text.isdigit() and len(text) <= 19 and 1 <= int(text) <= MAX_ID:
        return int(text)
    raise InvalidRequest(f"{what} must be a whole number from 1 to {MAX_ID}, not {text[:40]!r}")


def parse_handle(text: str) -> str:
    """A handle: 1 to 32 letters, digits or underscores."""
    if 1 <= len(text) <= HANDLE_LENGTH and HANDLE_CHARACTERS.issuperset(text):
        return text
    raise InvalidRequest(
        f"a handle is 1 to {HANDLE_LENGTH} letters, digits or underscores, not {text[:40]!r}"
    )


# ---------------------------------------------------------------------------------------------
# The operations, each as parse / draw / render / run.


def _not_found(message: str) -> Result:
    return 404, {"error": "not_found", "message": message}


def parse_post_by_id(request: Request) -> Args:
    return (parse_id(request.params["id"], "the post id"),)


def draw_post_by_id(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["posts"]),)


def render_post_by_id(args: Args) -> tuple[str, bytes | None]:
    return f"/post/{args[0]}", None


async def run_post_by_id(engine: Engine, args: Args) -> Result:
    post = await operations.post_by_id(engine, args[0])
    return (200, post) if post else _not_found(f"no post with id {args[0]}")


def parse_profile(request: Request) -> Args:
    return (parse_handle(request.params["handle"]),)


def draw_profile(draw: Draw, sizes: Sizes) -> Args:
    return (handle_of(draw.id(sizes["users"])),)


def render_profile(args: Args) -> tuple[str, bytes | None]:
    return f"/u/{args[0]}", None


async def run_profile(engine: Engine, args: Args) -> Result:
    page = await operations.profile(engine, args[0])
    return (200, page) if page else _not_found(f"no user with handle {args[0]!r}")


def parse_timeline(request: Request) -> Args:
    return (parse_id(request.params["user_id"], "the user id"),)


def draw_timeline(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["users"]),)


def render_timeline(args: Args) -> tuple[str, bytes | None]:
    return f"/timeline/{args[0]}", None


async def run_timeline(engine: Engine, args: Args) -> Result:
    return 200, await operations.timeline(engine, args[0])


def parse_create_post(request: Request) -> Args:
    post = _decode(NewPost, request.body)
    return (post.user_id, post.body)


def draw_create_post(draw: Draw, sizes: Sizes) -> Args:
    bodies = post_bodies()
    return (draw.id(sizes["users"]), str(bodies[draw.below(len(bodies))]))


def render_create_post(args: Args) -> tuple[str, bytes | None]:
    return "/post", encode({"user_id": args[0], "body": args[1]})


async def run_create_post(engine: Engine, args: Args) -> Result:
    post = await operations.create_post(engine, args[0], args[1])
    return (201, post) if post else _not_found(f"no user with id {args[0]}")


def acknowledge_create_post(body: Any) -> tuple[Any, ...]:
    return ("post", body["id"], body["user_id"])


def parse_like(request: Request) -> Args:
    new = _decode(NewLike, request.body)
    return (new.user_id, new.post_id)


def draw_like(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["users"]), draw.id(sizes["posts"]))


def render_like(args: Args) -> tuple[str, bytes | None]:
    return "/like", encode({"user_id": args[0], "post_id": args[1]})


async def run_like(engine: Engine, args: Args) -> Result:
    made = await operations.like(engine, args[0], args[1])
    if made is None:
        return _not_found(f"no user {args[0]} or no post {args[1]}")
    return (201 if made else 200), {"user_id": args[0], "post_id": args[1], "new": made}


def acknowledge_like(body: Any) -> tuple[Any, ...]:
    return ("like", body["user_id"], body["post_id"])


def parse_follow(request: Request) -> Args:
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


async def run_follow(engine: Engine, args: Args) -> Result:
    made = await operations.follow(engine, args[0], args[1])
    if made is None:
        return _not_found(f"no user {args[0]} or no user {args[1]}")
    return (201 if made else 200), {"follower_id": args[0], "followee_id": args[1], "new": made}


def acknowledge_follow(body: Any) -> tuple[Any, ...]:
    return ("follow", body["follower_id"], body["followee_id"])


_MIXED = MIXES[DEFAULT_MIX]
SPECS = (
    Spec(
        "post_by_id",
        "GET",
        "/post/{id}",
        False,
        0.0,
        (operations.POST_BY_ID,),
        run_post_by_id,
        parse_post_by_id,
        draw_post_by_id,
        render_post_by_id,
    ),
    Spec(
        "profile",
        "GET",
        "/u/{handle}",
        False,
        0.0,
        (operations.USER_BY_HANDLE, operations.USER_POSTS),
        run_profile,
        parse_profile,
        draw_profile,
        render_profile,
    ),
    Spec(
        "timeline",
        "GET",
        "/timeline/{user_id}",
        False,
        _MIXED["timeline"],
        (operations.TIMELINE,),
        run_timeline,
        parse_timeline,
        draw_timeline,
        render_timeline,
    ),
    Spec(
        "create_post",
        "POST",
        "/post",
        True,
        _MIXED["create_post"],
        (operations.USER_EXISTS, operations.INSERT_POST),
        run_create_post,
        parse_create_post,
        draw_create_post,
        render_create_post,
        acknowledge_create_post,
    ),
    Spec(
        "like",
        "POST",
        "/like",
        True,
        _MIXED["like"],
        (operations.LIKE_CHECK, operations.INSERT_LIKE),
        run_like,
        parse_like,
        draw_like,
        render_like,
        acknowledge_like,
    ),
    Spec(
        "follow",
        "POST",
        "/follow",
        True,
        _MIXED["follow"],
        (operations.FOLLOW_CHECK, operations.INSERT_FOLLOW),
        run_follow,
        parse_follow,
        draw_follow,
        render_follow,
        acknowledge_follow,
    ),
)
