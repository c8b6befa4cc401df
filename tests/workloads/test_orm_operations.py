"""The `orm` workload as dbladder sees it: routes, input checks, generated requests, sizes and presets."""

from __future__ import annotations

import random
import sys
from urllib.parse import urlsplit

import pytest

from dbladder.errors import InvalidRequest
from dbladder.load.presets import get_preset
from dbladder.workloads.base import Draw, HttpRequest
from dbladder.workloads.orm import data, workload
from dbladder.workloads.orm.operations import holders
from dbladder.workloads.registry import load_workload

SIZES = workload.scaled_sizes(0.1)


def request_of(operation: str, path: str, body: bytes | None) -> HttpRequest:
    """The HttpRequest the service builds for `path`, matched against the operation's route."""
    parts = urlsplit(path)
    route = workload.operation(operation).route.strip("/").split("/")
    segments = parts.path.strip("/").split("/")
    params = {name[1:-1]: value for name, value in zip(route, segments, strict=True) if name.startswith("{")}
    return HttpRequest(params, parts.query, body or b"")


def test_it_is_built_in_and_valid():
    loaded = load_workload("orm")
    assert loaded is workload and loaded.validate() == []
    assert [op.name for op in workload.operations] == [
        "list_assets",
        "asset_detail",
        "dashboard",
        "create_finding",
        "create_asset",
    ]
    assert {op.name for op in workload.operations if op.write} == {"create_finding", "create_asset"}
    assert workload.write_share(workload.mix()) == pytest.approx(0.2)


def test_every_drawn_request_parses_back_to_its_arguments():
    draw = Draw(random.Random(5).random)
    for operation in workload.operations:
        for _ in range(50):
            args = operation.draw(draw, SIZES)
            path, body = operation.render(args)
            assert tuple(operation.parse(request_of(operation.name, path, body))) == tuple(args), path


@pytest.mark.parametrize(
    ("operation", "path", "body", "message"),
    [
        ("list_assets", "/assets?after=0", None, "user is required"),
        ("list_assets", "/assets?user=0", None, "user must be a whole number"),
        ("list_assets", "/assets?user=2&page=3", None, "unknown query parameter 'page'"),
        ("asset_detail", "/assets/x?user=2", None, "asset id must be a whole number"),
        ("create_finding", "/findings", b'{"user_id": 1}', "invalid finding"),
        (
            "create_finding",
            "/findings",
            b'{"user_id":1,"asset_id":1,"assessment_id":1,"control_id":1,"severity":9,"title":"t"}',
            "severity",
        ),
        (
            "create_asset",
            "/assets",
            b'{"user_id":1,"name":"a","kind":"server","criticality":1}',
            "kind must be",
        ),
        ("create_asset", "/assets", b"not json", "not valid JSON"),
    ],
)
def test_bad_requests_are_refused_naming_the_field(operation, path, body, message):
    with pytest.raises(InvalidRequest, match=message):
        workload.operation(operation).parse(request_of(operation, path, body))


def test_draws_pick_a_user_who_holds_the_grant_the_request_needs():
    # The grants do not depend on the seed, so the draw can know them without the database.
    draw = Draw(random.Random(9).random)
    for _ in range(100):
        user, asset = workload.operation("asset_detail").draw(draw, SIZES)
        assert user == data.ADMIN_USER_ID or data.permission_level(user, [asset])[0] >= data.VIEW
        user, asset, *_ = workload.operation("create_finding").draw(draw, SIZES)
        assert user == data.ADMIN_USER_ID or data.permission_level(user, [asset])[0] == data.EDIT
    assert holders(7, 50, data.EDIT)[0] == data.ADMIN_USER_ID


def test_sizes_scale_the_data_not_the_accounts_and_the_empty_set_is_valid():
    assert workload.scaled_sizes(2) == {
        "users": 50,
        "controls": 100,
        "assets": 2000,
        "assessments": 100,
        "findings": 15000,
    }
    assert workload.validate_sizes(data.EMPTY) == []
    assert workload.validate_sizes({**data.POPULATED, "users": 0}) == [
        "users must be at least 1 (user 1 is the administrator)"
    ]
    assert workload.validate_sizes({**data.POPULATED, "assets": 1.5})[0].startswith("size assets must be")


def test_presets_are_the_posts_round_on_both_data_sets():
    ciso = get_preset(workload, "ciso")
    assert ciso.users is not None and ciso.ladder is None
    (phase,) = ciso.users.phases
    # 10 users spawned at 2 a second (5 s), 60 s in all.
    assert (phase.users, phase.ramp, phase.ramp + phase.hold) == (10, 5.0, 60.0)
    assert ciso.users.think_mean == 1.0
    empty = get_preset(workload, "ciso-empty")
    assert dict(empty.sizes) == data.EMPTY
    assert empty.weights is not None
    assert {name for name, _ in empty.weights} == {"list_assets", "dashboard", "create_asset"}
    assert workload.mix(weights=dict(empty.weights)).share("asset_detail") == 0
    assert get_preset(workload, "quick").ladder is not None


def test_the_load_generator_does_not_import_the_orm():
    # Only the processes that run operations need SQLAlchemy (half a second to import).
    import subprocess

    code = (
        "import sys; from dbladder.workloads.registry import load_workload; "
        "w = load_workload('orm'); w.operations[0].render((1, 0)); print('sqlalchemy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
