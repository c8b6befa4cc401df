"""The dashboard's server over real HTTP: the page with nothing to fetch, the stream of server-sent
events as the state changes and its end, /metrics, and the addresses it refuses."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import threading
from collections.abc import Iterator

import pytest
from cli_support import dbladder
from dashboard_support import level_row, live_view
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from dbladder.dashboard import (
    DashboardServer,
    DashboardState,
    DashboardUnavailable,
    RemoteDashboard,
    check_address,
    parse_address,
)


@pytest.fixture
def served() -> Iterator[tuple[DashboardState, DashboardServer]]:
    state = DashboardState("dbladder run", {"p95_ms": 50.0, "max_fail_pct": 1.0})
    with DashboardServer(state) as server:
        yield state, server


@contextlib.contextmanager
def connection(server: DashboardServer) -> Iterator[http.client.HTTPConnection]:
    host, port = server.url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    client = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        yield client
    finally:
        client.close()


def get(server: DashboardServer, path: str) -> tuple[int, str, str]:
    """GET path: the status, the Content-Type and the body."""
    with connection(server) as client:
        client.request("GET", path)
        response = client.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read().decode()


def events(response: http.client.HTTPResponse) -> Iterator[tuple[int, dict]]:
    """The stream's events as (id, document), comments skipped, until the server closes it."""
    fields: dict[str, str] = {}
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith(":"):
            continue
        if line:
            name, _, value = line.partition(": ")
            fields[name] = value
        elif fields:
            yield int(fields["id"]), json.loads(fields["data"])
            fields = {}


def test_the_stream_sends_each_new_state_then_the_last_one_and_closes(served):
    state, server = served
    with connection(server) as client:
        client.request("GET", "/events")
        response = client.getresponse()
        seen = _stream_while_fed(state, response)
    assert seen[-1][1]["ended"] is True and seen[-1][0] == state.version
    assert seen[-1][1]["runs"][0]["levels"][0]["offered_rps"] == 100.0
    assert [number for number, _ in seen] == sorted({number for number, _ in seen})  # never one twice


def _stream_while_fed(state: DashboardState, response: http.client.HTTPResponse) -> list[tuple[int, dict]]:
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    stream = events(response)
    version, first = next(stream)
    assert version == state.version and first["runs"] == [] and first["ended"] is False

    def feed() -> None:
        state.live(live_view(0, 1.0))
        state.level(level_row(0, 600, 300))
        state.end("finished")

    threading.Thread(target=feed).start()
    return list(stream)  # to the end: the server closes the stream after the last state


def test_the_page_carries_the_state_and_fetches_nothing(served):
    state, server = served
    state.level(level_row(0, 600, 300))
    status, content_type, page = get(server, "/")
    assert status == 200 and content_type == "text/html; charset=utf-8"
    inlined = re.search(r"let state = (.*);\n", page)
    assert inlined is not None and json.loads(inlined.group(1))["runs"][0]["levels"][0]["index"] == 0
    assert "const live = true;" in page
    # Everything inline: no script, style, image or font from anywhere (the SVG namespace is a name).
    assert re.findall(r"""(?:src|href)\s*=|@import|url\(""", page) == []
    assert set(re.findall(r"https?://[^\s\"'`]+", page)) == {"http://www.w3.org/2000/svg"}


def test_metrics_answer_in_openmetrics_text(served):
    state, server = served
    state.level(level_row(0, 600, 300, write_failures=3))
    status, content_type, text = get(server, "/metrics")
    assert status == 200 and content_type.startswith("application/openmetrics-text; version=1.0.0")
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert families["dbladder_requests"].type == "counter"
    values = {sample.labels["operation"]: sample.value for sample in families["dbladder_failures"].samples}
    assert values == {"read": 0, "write": 3}


def test_anything_else_is_not_found(served):
    _, server = served
    assert get(server, "/nope")[0] == 404


def test_addresses():
    assert parse_address("8090") == ("127.0.0.1", 8090)
    assert parse_address("127.0.0.2:0") == ("127.0.0.2", 0)
    assert parse_address("[::1]:8090") == ("::1", 8090)
    with pytest.raises(Exception, match=r"--dashboard takes \[HOST:\]PORT"):
        parse_address("localhost:http")
    check_address("localhost", allow_remote=False)
    check_address("0.0.0.0", allow_remote=True)
    with pytest.raises(RemoteDashboard) as refused:
        check_address("0.0.0.0", allow_remote=False)
    assert str(refused.value) == (
        "the dashboard would listen on 0.0.0.0 (every address of this machine), which is not a loopback "
        "address; it shows the run to anyone who can reach it, so it listens on loopback only unless "
        "--allow-remote-dashboard is given"
    )


def test_a_port_in_use_is_one_line(served):
    _, server = served
    port = int(server.url.rstrip("/").rsplit(":", 1)[1])
    with pytest.raises(DashboardUnavailable, match=rf"^the dashboard cannot listen on 127.0.0.1:{port}: "):
        DashboardServer(DashboardState("x"), port=port)


@pytest.mark.slow  # the command in a process of its own: a few seconds on a busy machine
def test_run_refuses_every_address_before_it_starts(tmp_path):
    result = dbladder("run", "--db", f"sqlite:///{tmp_path}/x.db", "--dashboard", "0.0.0.0:8090")
    assert result.returncode == 2
    assert result.stderr == (
        "Error: the dashboard would listen on 0.0.0.0 (every address of this machine), which is not a "
        "loopback address; it shows the run to anyone who can reach it, so it listens on loopback only "
        "unless --allow-remote-dashboard is given\n"
    )
    assert not (tmp_path / "x.db").exists()
