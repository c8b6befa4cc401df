"""Where a round's load goes (dbladder.run.targets): nothing started in direct mode, a service
already running taken as it is, and the route to the database carried with either."""

from __future__ import annotations

from pathlib import Path

from dbladder.result.run import Service
from dbladder.run.config import RunConfig
from dbladder.run.load_target import service_description
from dbladder.run.progress import QuietProgress
from dbladder.run.targets import target_for
from dbladder.run.this_machine import LoadHere


class Said(QuietProgress):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def test_direct_mode_starts_no_service_and_the_load_takes_the_databases_own_route(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/x.db"
    config = RunConfig(target="direct", db_url=url)
    with target_for(config, LoadHere()).started(QuietProgress(), None, config.round_workload()) as target:
        assert (target.host, target.port, target.service, target.described) == ("", 0, None, None)
        assert target.db_url == url
        assert target.transport is not None and target.transport.url == url
        assert target.transport.chosen is False


def test_a_service_already_running_is_where_the_load_goes_and_nothing_is_started(tmp_path: Path) -> None:
    progress = Said()
    config = RunConfig(service_url="http://127.0.0.1:9", db_url=f"sqlite:///{tmp_path}/x.db")
    with target_for(config, LoadHere()).started(progress, None, config.round_workload()) as target:
        assert (target.host, target.port, target.service) == ("127.0.0.1", 9, None)
        assert target.described is not None
        assert target.described.to_json() == {"url": "http://127.0.0.1:9", "started_by_dbladder": False}
    assert progress.lines == ["load goes to the service already running at http://127.0.0.1:9"]


def test_dbladder_services_description_writes_its_keys_as_result_json_has_them(tmp_path: Path) -> None:
    # Built in code, the typed `service` writes its fields in their declared order: the order the
    # round wrote its description in (the run settings after the pool, the totals last).
    config = RunConfig(db_url=f"sqlite:///{tmp_path}/x.db", workers=2, pool_size=10)
    here = service_description(config, "http://127.0.0.1:8000").updated({"stats": {"requests": 3}})
    assert here.to_json() == {
        "workers": 2,
        "pool_size": 10,
        "sqlite_writers": 0,
        "url": "http://127.0.0.1:8000",
        "stats": {"requests": 3},
    }
    assert list(here.to_json()) == ["workers", "pool_size", "sqlite_writers", "url", "stats"]
    on_agent = service_description(config, "http://10.0.0.4:8000", "app-1").updated({"stats": {}})
    assert list(on_agent.to_json()) == ["workers", "pool_size", "sqlite_writers", "url", "agent", "stats"]


def test_the_users_apps_description_writes_its_keys_as_result_json_has_them() -> None:
    app = Service(
        url="http://127.0.0.1:3000", started_by_dbladder=True, app=True, command="node app.js", sessions=0
    )
    assert list(app.updated({"starts": 1}).to_json()) == [
        "url",
        "started_by_dbladder",
        "app",
        "command",
        "sessions",
        "starts",
    ]
