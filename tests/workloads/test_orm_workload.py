"""The `orm` workload on every engine: its data, its answers, and its exact query counts.

Expected answers and query counts are worked out here from the generated rows, independently of
the ORM: a count that is off by one (a lazy load the ORM did not make, or one too many) fails.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections import Counter
from typing import Any

import pytest

from dbladder.engines import opened
from dbladder.errors import InvalidConfig
from dbladder.urls import parse_url
from dbladder.workloads.base import Answer, DataSpec, Draw
from dbladder.workloads.orm import data, endpoints, workload
from dbladder.workloads.orm.context import OrmContext, counting, open_context

SEED = 7
# Small enough to load in well under a second, big enough that a page has several owners,
# findings per asset and shared controls.
SIZES = {"users": 12, "controls": 30, "assets": 60, "assessments": 8, "findings": 400}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def rows(sizes: dict[str, int] = SIZES, seed: int = SEED) -> dict[str, list[tuple[Any, ...]]]:
    generated = data.generate(seed, sizes)
    return {table.name: [r for chunk in chunks for r in chunk] for table, chunks in generated}


def digest(table_rows: list[tuple[Any, ...]]) -> str:
    h = hashlib.sha256()
    for row in sorted(table_rows):
        h.update(("\x1f".join(str(v) for v in row) + "\n").encode())
    return h.hexdigest()


async def loaded_context(url: str, sizes: dict[str, int] = SIZES) -> OrmContext:
    async with opened(url) as engine:
        await data.load(engine, SEED, sizes)
    return await open_context(parse_url(url))


async def call(ctx: OrmContext, operation: str, *args: Any) -> tuple[Answer, int]:
    with counting() as count:
        answer = await getattr(endpoints, operation)(ctx, args)
    return answer, count.statements


# ---------------------------------------------------------------------------------------------
# Data


def test_same_seed_same_rows_other_seed_other_rows():
    assert rows() == rows()
    other = rows(seed=SEED + 1)
    assert other["users"] == rows()["users"]  # accounts are fixed
    assert other["findings"] != rows()["findings"]


def test_populated_sizes_are_the_posts_and_scale():
    assert data.scaled_sizes(1) == {
        "users": 50,
        "controls": 100,
        "assets": 1000,
        "assessments": 50,
        "findings": 7500,
    }
    assert data.scaled_sizes(2.5)["findings"] == 18750
    assert data.scaled_sizes(2.5)["users"] == 50
    assert data.scaled_sizes(1, populated=False) == data.EMPTY


def test_planned_rows_match_generated_rows_and_grants_are_about_forty_percent():
    generated = rows()
    planned = data.planned_rows(SIZES)
    assert planned == {name: len(table_rows) for name, table_rows in generated.items()}
    non_admin_pairs = (SIZES["users"] - 1) * SIZES["assets"]
    assert 0.3 < planned["asset_permissions"] / non_admin_pairs < 0.5
    assert {level for _, _, level in generated["asset_permissions"]} == {data.VIEW, data.EDIT}


def test_bad_sizes_name_every_problem():
    with pytest.raises(InvalidConfig) as caught:
        bad = {"users": 0, "controls": 0, "assets": 0, "assessments": 0, "findings": 5, "x": 1}
        list(data.generate(1, bad))
    message = str(caught.value)
    assert "users must be at least 1" in message
    assert "findings need at least one asset" in message
    assert "unknown table 'x'" in message


def test_every_engine_holds_exactly_the_generated_rows(any_url):
    async def read_back() -> dict[str, str]:
        async with opened(any_url) as engine:
            await data.load(engine, SEED, SIZES)
            digests = {}
            async with engine.read() as session:
                for table in data.SCHEMA.tables:
                    columns = ", ".join(table.column_names)
                    fetched = await session.fetch_all(f"SELECT {columns} FROM {table.name}")
                    digests[table.name] = digest([tuple(r) for r in fetched])
            return digests

    expected = {name: digest(table_rows) for name, table_rows in rows().items()}
    assert run(read_back()) == expected


# ---------------------------------------------------------------------------------------------
# Endpoints: answers and exact statement counts


def expected_list(user_id: int, after_id: int) -> tuple[list[int], int]:
    """(asset ids shown, statements) for list_assets, worked out from the generated rows."""
    generated = rows()
    users = {r[0]: r for r in generated["users"]}
    assets = sorted(r for r in generated["assets"] if r[0] > after_id)[: endpoints.PAGE_SIZE]
    grants = {(u, a): level for u, a, level in generated["asset_permissions"]}
    admin = users[user_id][3] == 1
    shown = [a for a in assets if admin or grants.get((user_id, a[0]), 0) >= data.VIEW]
    findings_of = {a[0]: [f for f in generated["findings"] if f[1] == a[0]] for a in shown}
    # user + page, then per shown asset: its findings; per row a permission check unless admin;
    # owners and controls once each (the identity map), the requesting user already loaded.
    owners = {a[4] for a in shown} - {user_id}
    controls = {f[3] for a in shown for f in findings_of[a[0]]}
    statements = 2 + (0 if admin else len(assets)) + len(shown) + len(owners) + len(controls)
    return [a[0] for a in shown], statements


def a_user_with_grants() -> int:
    generated = rows()
    counts = Counter(u for u, _, _ in generated["asset_permissions"])
    return min(counts)


def test_endpoints_answer_the_same_with_exact_counts_on_every_engine(any_url):
    user = a_user_with_grants()
    generated = rows()
    grants = {(u, a): level for u, a, level in generated["asset_permissions"]}
    hidden = next(a for a in range(1, SIZES["assets"] + 1) if (user, a) not in grants)
    visible = next(a for a in range(1, SIZES["assets"] + 1) if grants.get((user, a)) == data.VIEW)

    async def scenario() -> None:
        ctx = await loaded_context(any_url)
        try:
            for who, after in ((data.ADMIN_USER_ID, 0), (user, 0), (user, 20)):
                answer, statements = await call(ctx, "list_assets", who, after)
                shown, expected_statements = expected_list(who, after)
                assert answer.status == 200
                assert [a["id"] for a in answer.body["assets"]] == shown
                assert statements == expected_statements, (who, after)
            first = answer.body["assets"][0]
            assert first["findings"] == sorted(first["findings"], key=lambda f: f["id"])

            answer, statements = await call(ctx, "asset_detail", user, visible)
            assert (answer.status, statements) == (200, 3)  # user, asset with its owner, grant
            assert answer.body["owner"]["id"] == generated["assets"][visible - 1][4]
            answer, statements = await call(ctx, "asset_detail", data.ADMIN_USER_ID, visible)
            assert (answer.status, statements) == (200, 2)
            assert (await call(ctx, "asset_detail", user, hidden))[0].status == 403
            assert (await call(ctx, "asset_detail", user, 10_000))[0].status == 404
            assert (await call(ctx, "list_assets", 999, 0))[0].status == 404
        finally:
            await ctx.close()

    run(scenario())


def test_dashboard_counts_what_the_user_may_see(any_url):
    user = a_user_with_grants()
    generated = rows()
    seen = {a for u, a, _ in generated["asset_permissions"] if u == user}

    async def scenario() -> tuple[Any, Any, int]:
        ctx = await loaded_context(any_url)
        try:
            admin, admin_statements = await call(ctx, "dashboard", data.ADMIN_USER_ID)
            mine, _ = await call(ctx, "dashboard", user)
        finally:
            await ctx.close()
        return admin, mine, admin_statements

    admin, mine, statements = run(scenario())
    assert statements == 4  # user, then three aggregates: bounded whatever the data
    everything = Counter((f[5], f[6]) for f in generated["findings"])
    assert {(r["severity"], r["status"]): r["count"] for r in admin.body["findings"]} == everything
    visible = Counter((f[5], f[6]) for f in generated["findings"] if f[1] in seen)
    assert {(r["severity"], r["status"]): r["count"] for r in mine.body["findings"]} == visible
    open_per_assessment = Counter(f[2] for f in generated["findings"] if f[6] == "open")
    top = sorted(open_per_assessment.items(), key=lambda kv: (-kv[1], kv[0]))[: endpoints.DASHBOARD_TOP]
    assert [(r["id"], r["open"]) for r in admin.body["busiest_assessments"]] == top


def test_create_finding_writes_one_transaction_and_refuses_without_edit(any_url):
    generated = rows()
    grants = {(u, a): level for u, a, level in generated["asset_permissions"]}
    editor, asset = next(key for key, level in grants.items() if level == data.EDIT)
    viewer, viewed = next(key for key, level in grants.items() if level == data.VIEW)

    async def scenario() -> None:
        ctx = await loaded_context(any_url)
        try:
            answer, statements = await call(ctx, "create_finding", editor, asset, 1, 1, 3, "a new finding")
            assert answer.status == 201
            # user, asset, grant, assessment, control, INSERT finding, UPDATE asset
            assert statements == 7
            assert answer.body["id"] == SIZES["findings"] + 1
            refused, _ = await call(ctx, "create_finding", viewer, viewed, 1, 1, 3, "not allowed")
            assert refused.status == 403
            listed, _ = await call(ctx, "list_assets", data.ADMIN_USER_ID, asset - 1)
            titles = [f["title"] for f in listed.body["assets"][0]["findings"]]
            assert titles[-1] == "a new finding"
            assert "not allowed" not in str(listed.body)
            totals = ctx.totals()
            assert totals["create_finding"].requests == 2
            assert totals["create_finding"].statements >= 7
            assert totals["list_assets"].requests == 1
        finally:
            await ctx.close()

    run(scenario())


def test_empty_data_set_lists_nothing_and_takes_a_new_asset(any_url):
    async def scenario() -> None:
        ctx = await loaded_context(any_url, data.EMPTY)
        try:
            answer, statements = await call(ctx, "list_assets", data.ADMIN_USER_ID, 0)
            assert (answer.status, answer.body, statements) == (200, {"assets": [], "next_after": None}, 2)
            created, _ = await call(ctx, "create_asset", data.ADMIN_USER_ID, "first", "primary", 2)
            assert created.status == 201
            listed, _ = await call(ctx, "list_assets", data.ADMIN_USER_ID, 0)
            assert [a["name"] for a in listed.body["assets"]] == ["first"]
        finally:
            await ctx.close()

    run(scenario())


def test_drawn_requests_succeed_on_the_populated_set(sqlite_url):
    async def scenario() -> list[int]:
        ctx = await loaded_context(sqlite_url)
        draw = Draw(random.Random(1).random)
        statuses = []
        try:
            for operation in workload.operations:
                for _ in range(5):
                    statuses.append((await operation.run(ctx, operation.draw(draw, SIZES))).status)
        finally:
            await ctx.close()
        return statuses

    assert set(run(scenario())) <= {200, 201}


def test_acknowledged_writes_are_verified_against_the_database(any_url):
    finding_args = (data.ADMIN_USER_ID, 5, 1, 1, 2, "checked")
    asset_args = (3, "checked asset", "primary", 1)

    async def scenario() -> tuple[dict[str, int], dict[str, Any], dict[str, Any]]:
        ctx = await loaded_context(any_url)
        try:
            finding, _ = await call(ctx, "create_finding", *finding_args)
            asset, _ = await call(ctx, "create_asset", *asset_args)
        finally:
            await ctx.close()
        records = {
            "create_finding": [workload.operation("create_finding").acknowledge(finding_args, finding.body)],
            "create_asset": [workload.operation("create_asset").acknowledge(asset_args, asset.body)],
        }
        forged = {
            "create_finding": [(finding.body["id"], 6, data.ADMIN_USER_ID)],
            "create_asset": [(99_999, 3, "never made")],
        }
        spec = DataSpec(SEED, SIZES)
        async with opened(any_url) as engine:
            return (
                await workload.sizes_in(engine),
                await workload.verify(engine, spec, records),
                await workload.verify(engine, spec, forged),
            )

    sizes, clean, problems = run(scenario())
    assert sizes == {**SIZES, "findings": SIZES["findings"] + 1, "assets": SIZES["assets"] + 1}
    assert (clean["acknowledged"], clean["present"], clean["lost"], clean["corrupted"]) == (2, 2, 0, 0)
    assert clean["examples"] == [] and clean["violations"] == []
    assert (problems["acknowledged"], problems["present"], problems["lost"], problems["corrupted"]) == (
        2,
        1,
        1,
        1,
    )
    assert "was acknowledged but the database has (5, 1)" in problems["examples"][0]
    assert "no such asset" in problems["examples"][1]
