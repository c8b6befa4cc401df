"""The example app (examples/django_app/), a real Django project under gunicorn, on all three
engines: its own migrations and seed as the setup, sessions logged in through Django's login form
with its CSRF cookie, the list page, an incident posted and found afterwards by the request file's SQL."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from dbladder.app import AppCommand, app_environment, run_setup, running_app
from dbladder.app.checks import check_writes, read_rows
from dbladder.app.requests import load_request_file
from dbladder.app.sessions import make_sessions
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
                return await read_rows(engine, declared)

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
