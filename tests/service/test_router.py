"""The router: fixed paths, parameters, two methods naming one shape's parameters differently."""

from __future__ import annotations

import pytest

from dbladder.service.responses import HTTPError, Router


def handler(name: str):
    async def handle(scope, proto, params):  # pragma: no cover - only identity matters here
        return 200, name.encode()

    handle.__name__ = name
    return handle


@pytest.fixture
def router() -> Router:
    routes = Router()
    for method, pattern in (
        ("GET", "/healthz"),
        ("GET", "/users/{id}"),
        ("GET", "/users/{id}/todos"),
        ("POST", "/users/{user_id}/todos"),
        ("GET", "/users/me/todos"),
        ("POST", "/todos/{id}/done"),
    ):
        routes.add(method, pattern, handler(f"{method} {pattern}"))
    return routes


@pytest.mark.parametrize(
    ("method", "path", "route", "params"),
    [
        ("GET", "/healthz", "GET /healthz", {}),
        ("GET", "/users/7", "GET /users/{id}", {"id": "7"}),
        ("GET", "/users/7/todos", "GET /users/{id}/todos", {"id": "7"}),
        ("POST", "/users/7/todos", "POST /users/{user_id}/todos", {"user_id": "7"}),
        ("GET", "/users/me/todos", "GET /users/me/todos", {}),  # the fixed segment wins
        ("GET", "/users/", "GET /users/{id}", {"id": ""}),  # an empty id is the handler's 400
    ],
)
def test_a_path_finds_its_route_and_parameters(router, method, path, route, params) -> None:
    found, got = router.match(method, path)
    assert (found.__name__, got) == (route, params)


def test_unknown_paths_are_404_and_wrong_methods_405_with_allow(router) -> None:
    for path in ("/nothing", "/users/7/todos/8", "/todos/3"):
        with pytest.raises(HTTPError) as caught:
            router.match("GET", path)
        assert caught.value.status == 404
    with pytest.raises(HTTPError) as caught:
        router.match("DELETE", "/users/7/todos")
    assert caught.value.status == 405 and ("allow", "GET, POST") in caught.value.headers
    with pytest.raises(HTTPError) as caught:
        router.match("POST", "/healthz")
    assert caught.value.status == 405 and ("allow", "GET") in caught.value.headers
