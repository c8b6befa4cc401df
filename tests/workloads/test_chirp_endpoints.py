"""Chirp's operations in the workload interface's shape: parse, draw, render and run."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import pytest

from dbladder.data.chirp_seeding import seed_chirp
from dbladder.engines import opened
from dbladder.errors import InvalidRequest
from dbladder.workloads import chirp
from dbladder.workloads.chirp.endpoints import MIXES, SPECS

SIZES = {"users": 100, "posts": 2_000}


@dataclass(frozen=True)
class Request:
    params: dict[str, str]
    query: str = ""
    body: bytes = b""


@dataclass
class Draw:
    generator: random.Random = field(default_factory=lambda: random.Random(3))

    def random(self) -> float:
        return self.generator.random()

    def below(self, n: int) -> int:
        return int(self.generator.random() * n)

    def id(self, n: int) -> int:
        return self.below(n) + 1


def request_for(route: str, path: str, body: bytes | None) -> Request:
    """What the service's router would hand the parser: the route's {name} filled from the path."""
    params = {}
    for pattern, value in zip(route.split("/"), path.split("/"), strict=True):
        if pattern.startswith("{"):
            params[pattern[1:-1]] = value
    return Request(params, body=body or b"")


def test_specs_have_the_interface_fields_and_the_mixed_weights() -> None:
    assert [s.name for s in SPECS] == ["post_by_id", "profile", "timeline", "create_post", "like", "follow"]
    assert sum(s.weight for s in SPECS) == pytest.approx(1.0)
    assert sum(s.weight for s in SPECS if s.write) == pytest.approx(0.05)
    assert all(sum(mix.values()) == pytest.approx(1.0) for mix in MIXES.values())
    assert {s.name for s in SPECS if s.write} == {"create_post", "like", "follow"}


def test_render_then_parse_gives_the_drawn_arguments_back() -> None:
    draw = Draw()
    for spec in SPECS:
        for _ in range(50):
            args = spec.draw(draw, SIZES)
            path, body = spec.render(args)
            assert spec.parse(request_for(spec.route, path, body)) == args, spec.name
            assert (body is not None) == (spec.method == "POST")


def test_drawn_follows_never_follow_oneself() -> None:
    follow = next(s for s in SPECS if s.name == "follow")
    draw = Draw()
    pairs = [follow.draw(draw, {"users": 3, "posts": 1}) for _ in range(300)]
    assert all(a != b and 1 <= a <= 3 and 1 <= b <= 3 for a, b in pairs)
    assert len(set(pairs)) == 6


@pytest.mark.parametrize(
    ("name", "params", "body", "message"),
    [
        ("post_by_id", {"id": "0"}, b"", "the post id must be a whole number"),
        ("post_by_id", {"id": "²"}, b"", "the post id must be a whole number"),
        ("profile", {"handle": "a b"}, b"", "a handle is 1 to 32"),
        ("timeline", {"user_id": "x"}, b"", "the user id must be"),
        ("create_post", {}, b'{"user_id": 1}', "invalid NewPost"),
        ("create_post", {}, b'{"user_id": 1, "body": ""}', "invalid NewPost"),
        ("like", {}, b"not json", "not valid JSON"),
        ("like", {}, b'{"user_id": 1, "post_id": 2, "x": 3}', "invalid NewLike"),
        ("follow", {}, b'{"follower_id": 4, "followee_id": 4}', "cannot follow themselves"),
    ],
)
def test_bad_input_is_an_invalid_request(name: str, params: dict, body: bytes, message: str) -> None:
    spec = next(s for s in SPECS if s.name == name)
    with pytest.raises(InvalidRequest, match=message):
        spec.parse(Request(params, body=body))


def test_run_answers_and_acknowledgements(sqlite_url: str) -> None:
    config = chirp.ChirpConfig.at_scale(0.002)
    by_name = {s.name: s for s in SPECS}

    async def main():
        async with opened(sqlite_url) as engine:
            await seed_chirp(engine, config)
            answers = {
                "post": await by_name["post_by_id"].run(engine, (5,)),
                "no post": await by_name["post_by_id"].run(engine, (10**9,)),
                "profile": await by_name["profile"].run(engine, (chirp.handle_of(3),)),
                "no profile": await by_name["profile"].run(engine, ("nobody",)),
                "timeline": await by_name["timeline"].run(engine, (1,)),
                "create": await by_name["create_post"].run(engine, (3, "hi")),
                "like": await by_name["like"].run(engine, (1, 1)),
                "like again": await by_name["like"].run(engine, (1, 1)),
                "follow": await by_name["follow"].run(engine, (1, 100)),
            }
            acknowledged = [
                by_name[name].acknowledge(answers[key][1])  # type: ignore[misc]
                for name, key in (("create_post", "create"), ("like", "like"), ("follow", "follow"))
            ]
            return answers, await chirp.verify(engine, acknowledged)

    answers, problems = asyncio.run(main())
    statuses = {key: status for key, (status, _) in answers.items()}
    assert statuses == {
        "post": 200,
        "no post": 404,
        "profile": 200,
        "no profile": 404,
        "timeline": 200,
        "create": 201,
        "like": 201,
        "like again": 200,
        "follow": 201 if answers["follow"][1]["new"] else 200,
    }
    assert answers["profile"][1]["user"]["id"] == 3
    assert len(answers["timeline"][1]) == 20
    assert problems == []
