"""The compliance app as dbladder sees it: each endpoint's route, how its input is checked, and how the
load generator draws and sends one.

    list_assets     GET  /assets?user=U&after=A     a page of 20 assets after id A, as user U sees it
    asset_detail    GET  /assets/{id}?user=U        one asset
    dashboard       GET  /dashboard?user=U          the user's aggregates
    create_finding  POST /findings                  {"user_id", "asset_id", "assessment_id",
                                                     "control_id", "severity", "title"}
    create_asset    POST /assets                    {"user_id", "name", "kind", "criticality"}

The user is a parameter, not a login: an app authenticates a request and then loads its user,
which is what every endpoint does first (`endpoints.py`).

Generated requests are answered 200 or 201 on the populated data set: which user holds which grant
does not depend on the seed (`data.permission_level`), so a draw picks a user who may see (or
edit) the asset it names without reading the database. The mix's weights: the reads uniform, as
the Locust run of "PostgreSQL vs SQLite, 2026 edition" spread its requests uniformly over the
endpoints, and writes a fifth of the requests, as in the shop's mixed round.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import msgspec
import numpy as np

from ...errors import InvalidRequest
from ..base import Answer, Args, Draw, HttpRequest, Operation, Run, Sizes
from ..parsing import MAX_ID, decode_body, parse_id, parse_query
from .data import (
    ADMIN_USER_ID,
    ASSET_KINDS,
    ASSET_NAME_LENGTH,
    EDIT,
    PAGE_SIZE,
    SEVERITIES,
    TITLE_LENGTH,
    VIEW,
    permission_level,
)

Id = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]


class NewFinding(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The body of `POST /findings`."""

    user_id: Id
    asset_id: Id
    assessment_id: Id
    control_id: Id
    severity: Annotated[int, msgspec.Meta(ge=0, le=SEVERITIES - 1)]
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=TITLE_LENGTH)]


class NewAsset(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The body of `POST /assets`."""

    user_id: Id
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=ASSET_NAME_LENGTH)]
    kind: str
    criticality: Annotated[int, msgspec.Meta(ge=1, le=4)]


_finding_decoder = msgspec.json.Decoder(NewFinding)
_asset_decoder = msgspec.json.Decoder(NewAsset)
_encoder = msgspec.json.Encoder()


def _endpoint(name: str) -> Run:
    """The endpoint `name` of `endpoints.py`, imported when it first runs: a process that only sends
    requests (the HTTP load generator) never imports the ORM, which takes it half a second."""

    async def run(context: Any, args: Args) -> Answer:
        from . import endpoints

        answer: Answer = await getattr(endpoints, name)(context, args)
        return answer

    run.__name__ = run.__qualname__ = name
    return run


def _user(values: dict[str, str], example: str) -> int:
    text = values.get("user")
    if text is None:
        raise InvalidRequest(f"the query parameter user is required, e.g. {example}")
    return parse_id(text, "user")


# ---------------------------------------------------------------------------------------------
# list_assets: GET /assets?user=U&after=A


def _parse_list(request: HttpRequest) -> Args:
    values = parse_query(request.query, ("user", "after"))
    after = values.get("after", "0")
    return _user(values, "/assets?user=2&after=0"), 0 if after == "0" else parse_id(after, "after")


def _draw_list(draw: Draw, sizes: Sizes) -> Args:
    pages = max(1, -(-sizes["assets"] // PAGE_SIZE))
    return draw.id(sizes["users"]), PAGE_SIZE * draw.below(pages)


def _render_list(args: Args) -> tuple[str, bytes | None]:
    return f"/assets?user={args[0]}&after={args[1]}", None


# ---------------------------------------------------------------------------------------------
# asset_detail: GET /assets/{id}?user=U


def _parse_detail(request: HttpRequest) -> Args:
    values = parse_query(request.query, ("user",))
    return _user(values, "/assets/7?user=2"), parse_id(request.params["id"], "asset id")


@functools.lru_cache(maxsize=65_536)
def holders(asset_id: int, users: int, level: int) -> tuple[int, ...]:
    """The users who hold at least `level` on the asset, the administrator first."""
    others = np.arange(ADMIN_USER_ID + 1, users + 1, dtype=np.int64)
    levels = np.array([permission_level(int(u), np.array([asset_id]))[0] for u in others], dtype=np.int64)
    return (ADMIN_USER_ID, *others[levels >= level].tolist())


def _draw_detail(draw: Draw, sizes: Sizes) -> Args:
    asset_id = draw.id(max(1, sizes["assets"]))
    viewers = holders(asset_id, sizes["users"], VIEW)
    return viewers[draw.below(len(viewers))], asset_id


def _render_detail(args: Args) -> tuple[str, bytes | None]:
    return f"/assets/{args[1]}?user={args[0]}", None


# ---------------------------------------------------------------------------------------------
# dashboard: GET /dashboard?user=U


def _parse_dashboard(request: HttpRequest) -> Args:
    return (_user(parse_query(request.query, ("user",)), "/dashboard?user=2"),)


def _draw_dashboard(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["users"]),)


def _render_dashboard(args: Args) -> tuple[str, bytes | None]:
    return f"/dashboard?user={args[0]}", None


# ---------------------------------------------------------------------------------------------
# create_finding: POST /findings


def _parse_finding(request: HttpRequest) -> Args:
    body = decode_body(request.body, _finding_decoder, "finding")
    return body.user_id, body.asset_id, body.assessment_id, body.control_id, body.severity, body.title


def _draw_finding(draw: Draw, sizes: Sizes) -> Args:
    asset_id = draw.id(max(1, sizes["assets"]))
    editors = holders(asset_id, sizes["users"], EDIT)
    return (
        editors[draw.below(len(editors))],
        asset_id,
        draw.id(max(1, sizes["assessments"])),
        draw.id(max(1, sizes["controls"])),
        draw.below(SEVERITIES),
        f"reported finding {draw.below(1_000_000)}",
    )


def _render_finding(args: Args) -> tuple[str, bytes | None]:
    user_id, asset_id, assessment_id, control_id, severity, title = args
    body = NewFinding(user_id, asset_id, assessment_id, control_id, severity, title)
    return "/findings", _encoder.encode(body)


def _acknowledge_finding(args: Args, body: Any) -> tuple[Any, ...]:
    """What the integrity check needs of an acknowledged finding: its id, asset and reporter."""
    return int(body["id"]), int(args[1]), int(args[0])


# ---------------------------------------------------------------------------------------------
# create_asset: POST /assets


def _parse_asset(request: HttpRequest) -> Args:
    body = decode_body(request.body, _asset_decoder, "asset")
    if body.kind not in ASSET_KINDS:
        raise InvalidRequest(f"kind must be one of {', '.join(ASSET_KINDS)}, not {body.kind[:40]!r}")
    return body.user_id, body.name, body.kind, body.criticality


def _draw_asset(draw: Draw, sizes: Sizes) -> Args:
    return (
        draw.id(sizes["users"]),
        f"new asset {draw.below(1_000_000)}",
        ASSET_KINDS[draw.below(len(ASSET_KINDS))],
        1 + draw.below(4),
    )


def _render_asset(args: Args) -> tuple[str, bytes | None]:
    return "/assets", _encoder.encode(NewAsset(*args))


def _acknowledge_asset(args: Args, body: Any) -> tuple[Any, ...]:
    """What the integrity check needs of an acknowledged asset: its id, owner and name."""
    return int(body["id"]), int(args[0]), str(args[1])


OPERATIONS = (
    Operation(
        "list_assets",
        "GET",
        "/assets",
        False,
        4,
        _endpoint("list_assets"),
        _parse_list,
        _draw_list,
        _render_list,
        description="a page of 20 assets with their owners, findings and controls, each checked "
        "against the user's grants: the ORM's lazy loads (N+1)",
    ),
    Operation(
        "asset_detail",
        "GET",
        "/assets/{id}",
        False,
        4,
        _endpoint("asset_detail"),
        _parse_detail,
        _draw_detail,
        _render_detail,
        description="one asset and its owner by key, the grant checked: a bounded lookup",
    ),
    Operation(
        "dashboard",
        "GET",
        "/dashboard",
        False,
        4,
        _endpoint("dashboard"),
        _parse_dashboard,
        _draw_dashboard,
        _render_dashboard,
        description="findings by severity and status, assets by criticality, the busiest assessments",
    ),
    Operation(
        "create_finding",
        "POST",
        "/findings",
        True,
        2,
        _endpoint("create_finding"),
        _parse_finding,
        _draw_finding,
        _render_finding,
        acknowledge=_acknowledge_finding,
        description="one transaction: the user, asset, grant, assessment and control read, a finding "
        "inserted, the asset updated",
    ),
    Operation(
        "create_asset",
        "POST",
        "/assets",
        True,
        1,
        _endpoint("create_asset"),
        _parse_asset,
        _draw_asset,
        _render_asset,
        acknowledge=_acknowledge_asset,
        description="a new asset and its creator's grant; answers on the empty data set too",
    ),
)
