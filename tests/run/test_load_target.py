"""Where a round's load goes (dbladder.run.targets): nothing started in direct mode, a service
already running taken as it is, and the route to the database carried with either."""

from __future__ import annotations

from pathlib import Path

from dbladder.run.config import RunConfig
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
        assert (target.host, target.port, target.service, target.description) == ("", 0, None, None)
        assert target.db_url == url
        assert target.transport is not None and target.transport["url"] == url
        assert target.transport["chosen"] is False


def test_a_service_already_running_is_where_the_load_goes_and_nothing_is_started(tmp_path: Path) -> None:
    progress = Said()
    config = RunConfig(service_url="http://127.0.0.1:9", db_url=f"sqlite:///{tmp_path}/x.db")
    with target_for(config, LoadHere()).started(progress, None, config.round_workload()) as target:
        assert (target.host, target.port, target.service) == ("127.0.0.1", 9, None)
        assert target.description == {"url": "http://127.0.0.1:9", "started_by_dbladder": False}
    assert progress.lines == ["load goes to the service already running at http://127.0.0.1:9"]
