"""Chirp's operations in the workload interface: parse, draw, render, run, acknowledge, presets."""

from __future__ import annotations

import asyncio
import random

import pytest

from dbladder.data.seeding import seed
from dbladder.engines import opened
from dbladder.errors import InvalidRequest
from dbladder.load.presets import get_preset
from dbladder.workloads.base import DataSpec, Draw, HttpRequest
from dbladder.workloads.chirp import workload
from dbladder.workloads.chirp.data import handle_of
from dbladder.workloads.registry import load_workload

SIZES = {"users": 100, "posts": 2_000}
BY_NAME = {op.name: op for op in workload.operations}


def a_draw() -> Draw:
    return Draw(random.Random(3).random)


def request_for(route: str, path: str, body: bytes | None) -> HttpRequest:
    """What the service's router would hand the parser: the route's {name} filled from the path."""
    params = {}
    for pattern, value in zip(route.split("/"), path.split("/"), strict=True):
        if pattern.startswith("{"):
            params[pattern[1:-1]] = value
    return HttpRequest(params, body=body or b"")


def test_chirp_is_a_built_in_workload_with_the_posts_mixed_round() -> None:
    assert load_workload("chirp") is workload
    assert [op.name for op in workload.operations] == [
        "post_by_id",
        "profile",
        "timeline",
        "create_post",
        "like",
        "follow",
    ]
    mix = workload.mix()
    assert mix.share("timeline") == pytest.approx(0.95)
    assert workload.write_share(mix) == pytest.approx(0.05)
    assert {op.name for op in workload.operations if op.write} == {"create_post", "like", "follow"}
    assert all(op.acknowledge is not None for op in workload.operations if op.write)


@pytest.mark.parametrize(
    ("preset", "only", "reference"),
    [
        ("post", "post_by_id", "51,427 req/s"),
        ("profile", "profile", "47,776 req/s"),
        ("timeline", "timeline", "3,543 req/s"),
        ("mixed", None, "3,654 req/s"),
    ],
)
def test_a_preset_per_round_of_the_post_with_its_figure(
    preset: str, only: str | None, reference: str
) -> None:
    chosen = get_preset(workload, preset)
    assert chosen.reference == f"{reference} on an Apple M1 with 50 connections"
    assert chosen.ladder is not None and chosen.ladder.validate() == []
    # Each ladder climbs past the post's own figure.
    top = chosen.ladder.start + chosen.ladder.step * (chosen.ladder.steps - 1)
    assert top > int(reference.split()[0].replace(",", ""))
    mix = workload.mix(chosen.write_share, dict(chosen.weights or ()))
    if only:
        assert mix.share(only) == 1.0
    else:
        assert mix.to_dict() == workload.mix().to_dict()


def test_render_then_parse_gives_the_drawn_arguments_back() -> None:
    draw = a_draw()
    for spec in workload.operations:
        for _ in range(50):
            args = spec.draw(draw, SIZES)
            path, body = spec.render(args)
            assert spec.parse(request_for(spec.route, path, body)) == args, spec.name
            assert (body is not None) == (spec.method == "POST")


def test_drawn_follows_never_follow_oneself() -> None:
    follow = BY_NAME["follow"]
    draw = a_draw()
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
    with pytest.raises(InvalidRequest, match=message):
        BY_NAME[name].parse(HttpRequest(params, body=body))


def test_run_answers_and_acknowledgements(sqlite_url: str) -> None:
    data = DataSpec(1, SIZES)

    async def main():
        async with opened(sqlite_url) as engine:
            await seed(engine, workload, data)
            context = await workload.open(engine)
            calls = {
                "post": ("post_by_id", (5,)),
                "no post": ("post_by_id", (10**9,)),
                "profile": ("profile", (handle_of(3),)),
                "no profile": ("profile", ("nobody",)),
                "timeline": ("timeline", (1,)),
                "create": ("create_post", (3, "hi")),
                "like": ("like", (1, 1)),
                "like again": ("like", (1, 1)),
                "follow": ("follow", (1, 100)),
            }
            answers = {key: await BY_NAME[name].run(context, args) for key, (name, args) in calls.items()}
            acknowledged = {
                name: [BY_NAME[name].acknowledge(calls[key][1], answers[key].body)]  # type: ignore[misc]
                for name, key in (("create_post", "create"), ("like", "like"), ("follow", "follow"))
            }
            checked = await workload.verify(engine, data, acknowledged)
            await workload.close(context)
            return answers, acknowledged, checked

    answers, acknowledged, checked = asyncio.run(main())
    statuses = {key: answer.status for key, answer in answers.items()}
    assert statuses == {
        "post": 200,
        "no post": 404,
        "profile": 200,
        "no profile": 404,
        "timeline": 200,
        "create": 201,
        "like": 201 if answers["like"].body["new"] else 200,
        "like again": 200,
        "follow": 201 if answers["follow"].body["new"] else 200,
    }
    assert answers["profile"].body["user"]["id"] == 3
    assert len(answers["timeline"].body) == 20
    assert acknowledged["create_post"][0][:2] == (2_001, 3)
    assert acknowledged["like"] == [(1, 1)] and acknowledged["follow"] == [(1, 100)]
    assert (checked["lost"], checked["corrupted"], checked["violations"]) == (0, 0, [])
