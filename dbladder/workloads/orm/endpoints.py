"""The compliance app's endpoints, written in the ORM's ordinary style.

Each endpoint is plain synchronous SQLAlchemy code, `_name(session, *args) -> Answer`, as an app
would write it; the coroutine of the same name (`list_assets(ctx, args)`) runs it through
`OrmContext.run`, which counts every statement it sends. Nothing here asks for eager loading
except where a careful app would (the bounded lookup): the list's N+1 queries are the ORM's own
lazy loads, and its per-object permission check is a `session.get` per row.

    list_assets     GET  /assets?user=&after=   a page of 20 assets; per asset a permission check,
                                                 its owner, its findings and each finding's control
                                                 (lazy loads: the N+1)
    asset_detail    GET  /assets/{id}?user=      one asset and its owner by key (bounded: 2-3 queries)
    dashboard       GET  /dashboard?user=        counts over the findings and assets the user may
                                                 see (aggregates: 4 queries whatever the data size)
    create_finding  POST /findings               a write transaction: checks, INSERT, UPDATE
    create_asset    POST /assets                 a write that works on the empty data set too

Every endpoint first loads the requesting user, as an app authenticates a request.
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, joinedload

from ..base import Answer, Args
from .context import OrmContext
from .data import EDIT, PAGE_SIZE, VIEW
from .models import Assessment, Asset, AssetPermission, Control, Finding, User

DASHBOARD_TOP = 5

SelectT = TypeVar("SelectT", bound=Select[*tuple[Any, ...]])


def _not_found(what: str, key: int) -> Answer:
    return Answer(404, {"error": "not_found", "message": f"no {what} with id {key}"})


def _forbidden(user_id: int, asset_id: int) -> Answer:
    message = f"user {user_id} holds no grant for that on asset {asset_id}"
    return Answer(403, {"error": "forbidden", "message": message})


def _may(session: Session, user: User, asset_id: int, level: int) -> bool:
    """The per-object permission check: the administrator may do anything, others need a grant."""
    if user.is_admin:
        return True
    grant = session.get(AssetPermission, (user.id, asset_id))
    return grant is not None and grant.level >= level


def _asset_summary(asset: Asset) -> dict[str, Any]:
    return {
        "id": asset.id,
        "name": asset.name,
        "kind": asset.kind,
        "criticality": asset.criticality,
        "owner": asset.owner.name,
        "findings": [
            {
                "id": finding.id,
                "title": finding.title,
                "severity": finding.severity,
                "status": finding.status,
                "control": finding.control.ref,
            }
            for finding in asset.findings
        ],
    }


# ---------------------------------------------------------------------------------------------
# The endpoints as the app writes them.


def _list_assets(session: Session, user_id: int, after_id: int) -> Answer:
    user = session.get(User, user_id)
    if user is None:
        return _not_found("user", user_id)
    page = session.scalars(select(Asset).where(Asset.id > after_id).order_by(Asset.id).limit(PAGE_SIZE)).all()
    assets = [_asset_summary(asset) for asset in page if _may(session, user, asset.id, VIEW)]
    next_after = page[-1].id if len(page) == PAGE_SIZE else None
    return Answer(200, {"assets": assets, "next_after": next_after})


def _asset_detail(session: Session, user_id: int, asset_id: int) -> Answer:
    user = session.get(User, user_id)
    if user is None:
        return _not_found("user", user_id)
    asset = session.get(Asset, asset_id, options=[joinedload(Asset.owner)])
    if asset is None:
        return _not_found("asset", asset_id)
    if not _may(session, user, asset_id, VIEW):
        return _forbidden(user_id, asset_id)
    return Answer(
        200,
        {
            "id": asset.id,
            "name": asset.name,
            "kind": asset.kind,
            "criticality": asset.criticality,
            "owner": {"id": asset.owner.id, "name": asset.owner.name, "email": asset.owner.email},
            "created_at": asset.created_at,
            "updated_at": asset.updated_at,
        },
    )


def _visible(statement: SelectT, user: User, asset_id: Any) -> SelectT:
    """`statement` limited to the assets the user may see (everything, for the administrator)."""
    if user.is_admin:
        return statement
    granted = select(AssetPermission.asset_id).where(
        AssetPermission.user_id == user.id, AssetPermission.level >= VIEW
    )
    return statement.where(asset_id.in_(granted))


def _dashboard(session: Session, user_id: int) -> Answer:
    user = session.get(User, user_id)
    if user is None:
        return _not_found("user", user_id)
    by_severity = session.execute(
        _visible(
            select(Finding.severity, Finding.status, func.count())
            .group_by(Finding.severity, Finding.status)
            .order_by(Finding.severity, Finding.status),
            user,
            Finding.asset_id,
        )
    ).all()
    by_criticality = session.execute(
        _visible(
            select(Asset.criticality, func.count()).group_by(Asset.criticality).order_by(Asset.criticality),
            user,
            Asset.id,
        )
    ).all()
    open_findings = func.count(Finding.id)
    busiest = session.execute(
        _visible(
            select(Assessment.id, Assessment.name, open_findings)
            .join(Finding, Finding.assessment_id == Assessment.id)
            .where(Finding.status == "open")
            .group_by(Assessment.id, Assessment.name)
            .order_by(open_findings.desc(), Assessment.id)
            .limit(DASHBOARD_TOP),
            user,
            Finding.asset_id,
        )
    ).all()
    return Answer(
        200,
        {
            "findings": [{"severity": s, "status": st, "count": n} for s, st, n in by_severity],
            "assets": [{"criticality": c, "count": n} for c, n in by_criticality],
            "busiest_assessments": [{"id": i, "name": name, "open": n} for i, name, n in busiest],
        },
    )


def _create_finding(
    session: Session,
    user_id: int,
    asset_id: int,
    assessment_id: int,
    control_id: int,
    severity: int,
    title: str,
) -> Answer:
    with session.begin():
        user = session.get(User, user_id)
        if user is None:
            return _not_found("user", user_id)
        asset = session.get(Asset, asset_id)
        if asset is None:
            return _not_found("asset", asset_id)
        if not _may(session, user, asset_id, EDIT):
            return _forbidden(user_id, asset_id)
        if session.get(Assessment, assessment_id) is None:
            return _not_found("assessment", assessment_id)
        if session.get(Control, control_id) is None:
            return _not_found("control", control_id)
        now = int(time.time())
        finding = Finding(
            asset_id=asset_id,
            assessment_id=assessment_id,
            control_id=control_id,
            title=title,
            severity=severity,
            status="open",
            reporter_id=user_id,
            created_at=now,
        )
        session.add(finding)
        asset.updated_at = now
    return Answer(201, {"id": finding.id, "asset_id": asset_id, "reporter_id": user_id})


def _create_asset(session: Session, user_id: int, name: str, kind: str, criticality: int) -> Answer:
    with session.begin():
        user = session.get(User, user_id)
        if user is None:
            return _not_found("user", user_id)
        now = int(time.time())
        asset = Asset(
            name=name, kind=kind, criticality=criticality, owner_id=user_id, created_at=now, updated_at=now
        )
        session.add(asset)
        if not user.is_admin:
            session.flush()  # the asset's id, for the creator's grant
            session.add(AssetPermission(user_id=user_id, asset_id=asset.id, level=EDIT))
    return Answer(201, {"id": asset.id, "owner_id": user_id})


# ---------------------------------------------------------------------------------------------
# The coroutines the service and the direct target call: run(ctx, args) -> Answer.


async def list_assets(ctx: OrmContext, args: Args) -> Answer:
    return await ctx.run("list_assets", _list_assets, *args)


async def asset_detail(ctx: OrmContext, args: Args) -> Answer:
    return await ctx.run("asset_detail", _asset_detail, *args)


async def dashboard(ctx: OrmContext, args: Args) -> Answer:
    return await ctx.run("dashboard", _dashboard, *args)


async def create_finding(ctx: OrmContext, args: Args) -> Answer:
    return await ctx.run("create_finding", _create_finding, *args)


async def create_asset(ctx: OrmContext, args: Args) -> Answer:
    return await ctx.run("create_asset", _create_asset, *args)
