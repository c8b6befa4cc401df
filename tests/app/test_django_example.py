"""The example app (examples/django_app/), a real Django project under gunicorn, on all three
engines: its own migrations and seed as the setup, sessions logged in through Django's login form
with its CSRF cookie, the list page, an incident posted and found afterwards by the request file's SQL."""

from __future__ import annotations

import asyncio
import re
import sys
from functools import partial
from pathlib import Path

import pytest

from dbladder.app import AppCommand, app_environment, run_setup, running_app
from dbladder.app.checks import check_queries, check_writes
from dbladder.app.requests import load_request_file
from dbladder.app.sessions import LoginFailed, make_sessions
from dbladder.engines import opened
from dbladder.urls import resolve_url

from .test_requests import send

pytest.importorskip("django")
pytest.importorskip("gunicorn")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "django_app"
SETUP = f"{sys.executable} manage.py migrate -v0 && {sys.executable} manage.py seed_tracker"
SERVE = f"{sys.executable} -m gunicorn incidents_site.wsgi -b 127.0.0.1:{{port}} -w 2"


@pytest.mark.slow
def test_the_example_app_logs_in_posts_with_csrf_and_keeps_its_writes(any_url, tmp_path):
    url = resolve_url(any_url)
    environment = app_environment(url)
    log = tmp_path / "app.log"
    run_setup(SETUP, EXAMPLE, environment, log)
    declared = load_request_file(EXAMPLE / "dbladder_requests.py")
    config = AppCommand(SERVE, EXAMPLE, ready_path="/accounts/login/", ready_timeout=60)
    with running_app(config, environment, log) as app:
        sessions = make_sessions("127.0.0.1", app.port, declared.login, 3)
        assert all({"sessionid", "csrftoken"} <= set(session.cookies) for session in sessions)

        async def rows():
            async with opened(url) as engine:
                return await check_queries(engine, declared)

        values = asyncio.run(rows())
        assert len(values["SELECT id FROM tracker_asset"]) == 400
        host = f"127.0.0.1:{app.port}"
        status, _, page = send(app.port, declared.request("assets").render({}, host, sessions[0]))
        assert (status, page.count(b"<li>")) == (200, 20)
        status, _, _ = send(app.port, declared.request("asset").render({"id": 7}, host, sessions[1]))
        assert status == 200
        report = declared.request("report")
        acknowledged = []
        for number, session in enumerate(sessions):
            rendered = report.render({"id": number + 1, "title": f"fan noise {number}"}, host, session)
            status, headers, body = send(app.port, rendered)
            assert status in report.success, body[:200]
            assert report.acknowledge is not None
            value = report.acknowledge.value(headers, body)
            assert value is not None
            acknowledged.append(value)
        status, _, body = send(app.port, report.render({"id": 1, "title": "x"}, host))
        assert (status, b"CSRF verification failed" in body) == (403, True)  # no session, no token
    assert not app.members()

    async def check():
        async with opened(url) as engine:
            return await check_writes(engine, declared, {"report": acknowledged}, {})

    found = asyncio.run(check())
    assert (found.acknowledged, found.lost_count, found.violations) == (
        {"report": 3},
        0,
        {"incidents of no asset": 0},
    )
    text = log.read_text()
    assert "seeded 16 users, 8 teams, 400 assets" in text
    assert "Booting worker" in text


TLS = {"TRACKER_BEHIND_TLS_PROXY": "1"}
HTTPS = {"X-Forwarded-Proto": "https", "Referer": "https://{host}/"}


@pytest.mark.slow
def test_behind_a_tls_proxy_the_files_headers_let_logins_and_forms_through_and_nothing_else(tmp_path):
    """SECURE_PROXY_SSL_HEADER on: a request is HTTPS only when X-Forwarded-Proto says so (plain
    HTTP is redirected, 301), and Django's CSRF check on HTTPS refuses a form (403) that comes
    without a Referer or an Origin of the site over https."""
    url = resolve_url(f"sqlite:///{tmp_path}/tracker.db")
    environment = app_environment(url) | TLS
    log = tmp_path / "app.log"
    run_setup(SETUP, EXAMPLE, environment, log)
    declared = load_request_file(EXAMPLE / "dbladder_requests.py")
    visitors = load_request_file(EXAMPLE / "dbladder_visitors.py")
    config = AppCommand(SERVE, EXAMPLE, ready_path="/accounts/login/", ready_timeout=60)
    with running_app(config, environment, log) as app:
        host = f"127.0.0.1:{app.port}"
        with pytest.raises(LoginFailed) as caught:
            make_sessions("127.0.0.1", app.port, declared.login, 1)
        assert str(caught.value).startswith(
            "session 1: the login page /accounts/login/ gave no CSRF token (no cookie 'csrftoken'; "
            "it answered 301"
        )
        with pytest.raises(LoginFailed) as caught:  # HTTPS, and the login page's own http:// Referer
            make_sessions("127.0.0.1", app.port, declared.login, 1, {"X-Forwarded-Proto": "https"})
        assert str(caught.value).startswith(
            "session 1: the login POST /accounts/login/ answered 403, not one of 302"
        )
        (session,) = make_sessions("127.0.0.1", app.port, declared.login, 1, HTTPS)
        report = declared.request("report")
        post = partial(report.render, {"id": 3, "title": "behind the proxy"}, host, session)
        assert send(app.port, post())[0] == 301
        assert send(app.port, post({"X-Forwarded-Proto": "https"}))[0] == 403
        status, headers, _ = send(app.port, post(HTTPS))
        assert status == 302 and re.fullmatch(r"/incidents/\d+/", headers["location"])
        # A visitor: no login, the contact form's page gives the token; an Origin does as a Referer.
        origin = {"X-Forwarded-Proto": "https", "Origin": "https://{host}"}
        (visitor,) = make_sessions("127.0.0.1", app.port, visitors.start, 1, origin)
        assert set(visitor.cookies) == {"csrftoken"}
        message = visitors.request("message")
        values = {"reference": "f00d" * 6, "words": "the fan is loud"}
        assert send(app.port, message.render(values, host, visitor, {"X-Forwarded-Proto": "https"}))[0] == 403
        status, _, page = send(app.port, message.render(values, host, visitor, origin))
        assert status == 200 and b"Thank you" in page

    async def check():
        async with opened(url) as engine:
            return await check_writes(engine, visitors, {"message": ["f00d" * 6, "not sent"]}, {})

    found = asyncio.run(check())
    assert (found.acknowledged, found.lost) == ({"message": 2}, {"message": ["not sent"]})
