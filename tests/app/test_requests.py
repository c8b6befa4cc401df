"""The request file: declared, checked at once, rendered to bytes, sent on logged-in sessions to a
real app, and its writes looked up in the real SQLite file afterwards."""

from __future__ import annotations

import asyncio
import random
import socket
import sys
import textwrap
from pathlib import Path

import pytest

from dbladder.app import AppCommand, app_environment, run_setup, running_app
from dbladder.app.checks import check_queries, check_writes
from dbladder.app.requests import (
    Acknowledge,
    Csrf,
    Login,
    LoginSession,
    Param,
    Request,
    RequestFileError,
    Requests,
    load_request_file,
)
from dbladder.app.sessions import LoginFailed, login, make_sessions
from dbladder.engines import opened
from dbladder.load.acknowledged import FailureSamples
from dbladder.urls import parse_url
from dbladder.workloads.base import Draw

HERE = Path(__file__).parent

REQUEST_FILE = textwrap.dedent(
    """
    from dbladder.app.requests import Acknowledge, Csrf, Invariant, Login, Param, Request, Requests

    requests = Requests(
        login=Login("/login", form={"username": "user{session}", "password": "pw"}, csrf=Csrf.cookie()),
        sessions=2,
        requests=[
            Request("item", "GET", "/items/{id}/", weight=3,
                params={"id": Param.rows("SELECT id FROM items")}),
            Request("add", "POST", "/items", success=(302,), form={"title": "{title}"},
                    params={"title": Param.text(1, 2)}, acknowledge=Acknowledge.location(r"/items/(\\d+)/"),
                    find="SELECT count(*) FROM items WHERE id = ?"),
        ],
        invariants=[Invariant("untitled items", "SELECT id FROM items WHERE title = ''")],
    )
    """
)


TOGETHER = "acknowledge and find go together: one says the value, the other looks it up"


def test_a_good_file_loads(tmp_path):
    path = tmp_path / "requests.py"
    path.write_text(REQUEST_FILE)
    declared = load_request_file(path)
    assert [request.name for request in declared.requests] == ["item", "add"]
    assert declared.row_queries() == ("SELECT id FROM items",)
    assert declared.source == str(path)


def test_every_problem_is_one_line_naming_the_file_and_the_request(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(
        textwrap.dedent(
            """
            from dbladder.app.requests import Acknowledge, Param, Request, Requests
            requests = Requests(requests=[
                Request("list", "FETCH", "assets/{page}"),
                Request("add", "POST", "/add", success=(), form={"a": "{b}"}, json={"x": 1},
                        acknowledge=Acknowledge.location("/add/"), params={"n": Param.integer(5, 1)}),
                Request("add", "GET", "/", find="SELECT 1"),
                Request("purge", "POST", "/p", acknowledge=Acknowledge.json("id"),
                        find="DELETE FROM items WHERE id = ?"),
            ], sessions=2)
            """
        )
    )
    with pytest.raises(RequestFileError) as caught:
        load_request_file(path)
    assert caught.value.exit_code == 2
    assert str(caught.value).splitlines() == [
        f"{path}: two requests are called 'add'",
        f"{path}: the request 'list': method 'FETCH' is not one of GET, HEAD, POST, PUT, PATCH, DELETE",
        f"{path}: the request 'list': path 'assets/{{page}}' must start with /",
        f"{path}: the request 'list': {{page}} is not one of its params",
        f"{path}: the request 'add': success must be HTTP statuses, not ()",
        f"{path}: the request 'add': give a form or a JSON body, not both",
        f"{path}: the request 'add': {{b}} is not one of its params",
        f"{path}: the request 'add': parameter n: low must not be above high (5 > 1)",
        f"{path}: the request 'add': {TOGETHER}",
        f"{path}: the request 'add': Acknowledge.location('/add/') needs a group (...) around the value",
        f"{path}: the request 'add': {TOGETHER}",
        f"{path}: the request 'add': find must have exactly one ? for the acknowledged value: 'SELECT 1'",
        f"{path}: the request 'purge': find needs a SELECT, not 'DELETE FROM items WHERE id = ?'",
        f"{path}: sessions=2 needs a login or a visit to make them",
    ]


def test_headers_visits_and_sent_acknowledgements_are_checked_with_the_rest(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(
        textwrap.dedent(
            """
            from dbladder.app.requests import Acknowledge, Login, Param, Request, Requests, Visit
            requests = Requests(
                headers={"Origin": "https://{host}/{id}", "Content-Length": "3", "X Bad": "1"},
                login=Login("/login"), visit=Visit("/contact/"), sessions=2,
                requests=[
                    Request("typo", "POST", "/m", form={"t": "{token}"}, params={"token": Param.unique()},
                            acknowledge=Acknowledge.sent("tokn"), find="SELECT count(*) FROM m WHERE t = ?"),
                    Request("shared", "POST", "/m", form={"t": "{title}"}, params={"title": Param.text()},
                            acknowledge=Acknowledge.sent("title"), find="SELECT count(*) FROM m WHERE t = ?"),
                    Request("unsent", "POST", "/m", params={"token": Param.unique(), "host": Param.text()},
                            headers={"X-Late": "a\\nb"},
                            acknowledge=Acknowledge.sent("token"), find="SELECT count(*) FROM m WHERE t = ?"),
                ])
            """
        )
    )
    with pytest.raises(RequestFileError) as caught:
        load_request_file(path)
    assert str(caught.value).splitlines() == [
        f"{path}: the request 'typo': Acknowledge.sent('tokn') names none of its params",
        f"{path}: the request 'shared': Acknowledge.sent('title') needs Param.unique(): "
        "a value two writes may send cannot tell which was kept",
        f"{path}: the request 'unsent': the header X-Late's value must be text on one line, not 'a\\nb'",
        f"{path}: the request 'unsent': a parameter cannot be called 'host': {{host}} is dbladder's own",
        f"{path}: the request 'unsent': Acknowledge.sent('token'): {{token}} is in none of its templates, "
        "so the app never receives it",
        f"{path}: headers: the header Origin: {{id}} is not one of {{session}}, {{host}}",
        f"{path}: headers: the header Content-Length is the load's client's to send",
        f"{path}: headers: 'X Bad' is not a header's name",
        f"{path}: give a login or a visit, not both: each session starts with one of them",
    ]


def test_a_file_that_fails_to_load_names_itself(tmp_path):
    missing = tmp_path / "none.py"
    with pytest.raises(RequestFileError, match=f"^{missing}: no such request file"):
        load_request_file(missing)
    broken = tmp_path / "broken.py"
    broken.write_text("requests = (\n")
    with pytest.raises(RequestFileError, match=f"^{broken}:1: syntax error: '\\(' was never closed$"):
        load_request_file(broken)
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(RequestFileError, match=r"defines no `requests = Requests\(\.\.\.\)`$"):
        load_request_file(empty)


def test_a_request_renders_to_bytes_with_its_session():
    request = Request(
        "add",
        "POST",
        "/assets/{id}/incidents",
        query={"via": "{kind}"},
        form={"title": "{title}", "by": "user{session}"},
        headers={"Accept": "text/html"},
        params={"id": Param.integer(1, 9), "kind": Param.choice("web"), "title": Param.text()},
    )
    session = LoginSession(
        4, {"csrftoken": "tok", "sessionid": "s1"}, "tok", "csrfmiddlewaretoken", "X-CSRFToken"
    )
    rendered = request.render({"id": 7, "kind": "web", "title": "a b"}, "127.0.0.1:8000", session)
    body = b"title=a+b&by=user4&csrfmiddlewaretoken=tok"
    assert rendered == (
        b"POST /assets/7/incidents?via=web HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept: text/html\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\nCookie: csrftoken=tok; sessionid=s1\r\n"
        b"X-CSRFToken: tok\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    )
    as_json = Request(
        "j", "PUT", "/x", json={"n": "{n}", "label": "n={n}"}, params={"n": Param.integer(1, 2)}
    )
    assert as_json.render({"n": 2}, "h").endswith(b'\r\n\r\n{"n": 2, "label": "n=2"}')
    assert Request("r", "GET", "/").render({}, "h") == b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"


def test_the_files_headers_go_with_every_request_its_own_and_the_sessions_replacing_them():
    request = Request(
        "message",
        "POST",
        "/contact/",
        form={"subject": "{token}"},
        headers={"referer": "https://{host}/contact/", "Accept": "text/html"},
        params={"token": Param.unique()},
    )
    session = LoginSession(2, {"csrftoken": "tok"}, "tok", "csrfmiddlewaretoken", "X-CSRFToken")
    common = {"X-Forwarded-Proto": "https", "Referer": "https://{host}/", "Cookie": "consent=yes"}
    rendered = request.render({"token": "f00d"}, "127.0.0.1:8000", session, common)
    body = b"subject=f00d&csrfmiddlewaretoken=tok"
    assert rendered == (
        b"POST /contact/ HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nX-Forwarded-Proto: https\r\n"
        b"Referer: https://127.0.0.1:8000/contact/\r\nCookie: consent=yes; csrftoken=tok\r\n"
        b"Accept: text/html\r\nContent-Type: application/x-www-form-urlencoded\r\nX-CSRFToken: tok\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body) + body
    )
    # A site that answers only its own name: the file's Host replaces the address's.
    named = Request("home", "GET", "/").render({}, "127.0.0.1:8000", None, {"host": "shop.example.com"})
    assert named == b"GET / HTTP/1.1\r\nHost: shop.example.com\r\n\r\n"


def test_a_unique_value_is_never_drawn_twice_and_checks_as_text():
    unique = Param.unique()
    drawn = {unique.draw(Draw(random.Random(0).random), {}) for _ in range(1000)}
    assert len(drawn) == 1000 and all(len(value) == 24 and int(value, 16) >= 0 for value in drawn)
    assert unique.check("token", "f00d") == "f00d"


def test_acknowledgements_are_read_from_json_a_header_or_a_location():
    assert Acknowledge.sent("token").value({}, b"<h1>Thank you</h1>", "f00d") == "f00d"
    assert Acknowledge.json("order.id").value({}, b'{"order": {"id": 12}}') == "12"
    assert Acknowledge.json("id").value({}, b"not json") is None
    assert Acknowledge.header("X-Id").value({"x-id": "9"}, b"") == "9"
    assert Acknowledge.location(r"/items/(\d+)/").value({"location": "/items/31/"}, b"") == "31"


def test_failures_keep_the_first_few_of_each_kind():
    samples = FailureSamples(per_kind=2)
    for number in range(4):
        samples.add("add", 403, b"CSRF verification failed %d " % number + b"x" * 300)
    samples.add("item", 500, b"boom")
    listed = samples.to_list()
    assert [(kind["request"], kind["status"], kind["count"]) for kind in listed] == [
        ("add", 403, 4),
        ("item", 500, 1),
    ]
    assert len(listed[0]["bodies"]) == 2
    assert len(listed[0]["bodies"][0]) == 200
    assert listed[0]["bodies"][0].startswith("CSRF verification failed 0 ")


def send(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """One rendered request on a fresh socket; the status, headers and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(data)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += connection.recv(65536)
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            body += connection.recv(65536)
    return int(lines[0].split()[1]), headers, body


@pytest.fixture
def app(tmp_path):
    url = parse_url(f"sqlite:///{tmp_path / 'app.db'}")
    environment = app_environment(url)
    run_setup(f"{sys.executable} login_app.py setup", HERE, environment)
    config = AppCommand(f"{sys.executable} login_app.py {{port}}", HERE, ready_path="/login")
    with running_app(config, environment, tmp_path / "app.log") as running:
        yield url, running


def test_sessions_log_in_and_their_writes_are_found_afterwards(app, tmp_path):
    url, running = app
    declared = load_request_file(_write(tmp_path, REQUEST_FILE))
    sessions = make_sessions("127.0.0.1", running.port, declared.login, declared.sessions)
    assert [session.number for session in sessions] == [1, 2]
    assert all(set(session.cookies) == {"csrftoken", "sessionid"} for session in sessions)
    add = declared.request("add")
    acknowledged = []
    for number, session in enumerate(sessions * 2):
        status, headers, _ = send(running.port, add.render({"title": f"new {number}"}, "h", session))
        assert status in add.success
        value = add.acknowledge.value(headers, b"") if add.acknowledge else None
        assert value is not None
        acknowledged.append(value)
    status, _, body = send(running.port, add.render({"title": "x"}, "h"))  # no session: no CSRF token
    assert (status, body) == (403, b"CSRF verification failed. Request aborted.")

    async def check():
        async with opened(url) as engine:
            rows = await check_queries(engine, declared)
            found = await check_writes(engine, declared, {"add": acknowledged}, {})
            async with engine.transaction() as session:
                await session.execute("DELETE FROM items WHERE id = ?", (int(acknowledged[0]),))
                await session.execute("INSERT INTO items (title) VALUES ('')")
            after = await check_writes(engine, declared, {"add": acknowledged}, {})
        return rows, found, after

    rows, found, after = asyncio.run(check())
    assert rows == {"SELECT id FROM items": [1, 2, 3, 4, 5, 6]}  # the 2 of the setup, the 4 posted
    assert (found.acknowledged, found.lost_count, found.violations) == ({"add": 4}, 0, {"untitled items": 0})
    assert after.lost == {"add": [acknowledged[0]]}
    assert after.violations == {"untitled items": 1}
    assert after.to_dict()["lost"] == 1


def test_a_login_that_fails_says_what_it_answered(app):
    _, running = app
    wrong = Login("/login", form={"username": "u", "password": "nope"}, csrf=Csrf.cookie(), success=(302,))
    with pytest.raises(LoginFailed) as caught:
        login("127.0.0.1", running.port, wrong, 3)
    assert str(caught.value) == (
        "session 3: the login POST /login answered 200, not one of 302: "
        "b'Please enter a correct username and password.'"
    )
    no_cookie = Login("/login", form={}, csrf=Csrf.cookie("csrf_token"))
    with pytest.raises(
        LoginFailed, match=r"^session 1: the login page /login gave no CSRF token \(no cookie 'csrf_token'"
    ):
        login("127.0.0.1", running.port, no_cookie, 1)


def test_rows_leave_nulls_out_and_carry_values_json_cannot_as_text(tmp_path):
    declared = Requests(
        [Request("r", "GET", "/{id}", params={"id": Param.rows("SELECT v FROM t ORDER BY rowid")})],
        source="f.py",
    )

    async def read():
        async with opened(parse_url(f"sqlite:///{tmp_path / 'e.db'}")) as engine:
            async with engine.transaction() as session:
                await session.execute("CREATE TABLE t (v)")
                for value in (None, 7, "slug", b"\x01", 2.5):
                    await session.execute("INSERT INTO t VALUES (?)", (value,))
            return await check_queries(engine, declared)

    assert asyncio.run(read()) == {"SELECT v FROM t ORDER BY rowid": [7, "slug", "b'\\x01'", 2.5]}


def test_a_rows_query_that_fails_when_run_is_one_line_naming_the_request(postgres_url):
    declared = Requests(
        [Request("r", "GET", "/{id}", params={"id": Param.rows("SELECT 1 / (random() > 2)::int")})],
        source="f.py",
    )

    async def read():
        async with opened(parse_url(postgres_url)) as engine:
            return await check_queries(engine, declared)

    with pytest.raises(RequestFileError) as caught:  # prepared, it divides by zero when run
        asyncio.run(read())
    assert str(caught.value) == (
        "f.py: the request 'r': Param.rows('SELECT 1 / (random() > 2)::int'): PostgreSQL failed running it: "
        "division by zero (it reads the app's data after --app-setup, before the app starts)"
    )


def _write(folder: Path, text: str) -> Path:
    path = folder / "requests.py"
    path.write_text(text)
    return path
