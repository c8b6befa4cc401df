"""A round's result document (dbladder.run.document): its opening shape, its headline as the plan
reads it, the file written as it goes, and ended with why when an error stops the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbladder.app.errors import AppExited, AppSetupFailed
from dbladder.app.requests import RequestFileError
from dbladder.errors import UsageError
from dbladder.plans import Ladder, Phase, Search, Stop, UserPlan
from dbladder.result.level import Level
from dbladder.result.run import EngineAsRun, WorkloadAsRun, read_result
from dbladder.run.config import RunConfig
from dbladder.run.document import Run, describe_load, ended_on_error, outcome_of
from dbladder.workloads.registry import load_workload


def row(rate: float, passed: bool, achieved: float) -> dict[str, Any]:
    return {
        "offered_rps": rate,
        "passed": passed,
        "reasons": [] if passed else ["p95"],
        "achieved_rps": achieved,
    }


def typed(rows: list[dict[str, Any]]) -> tuple[Level, ...]:
    return tuple(Level.from_json(found) for found in rows)


def finished(
    plan: Any, rows: list[dict[str, Any]], tmp_path: Path, stop: Stop | None = None
) -> dict[str, Any]:
    run = Run(RunConfig(plan=plan, out_dir=tmp_path), tmp_path / "result.json")
    run.update(levels=typed(rows))
    result = run.finish("complete", "done", stop)
    assert json.loads((tmp_path / "result.json").read_text()) == json.loads(json.dumps(result))
    return result


def test_a_run_opens_with_the_documents_keys_and_the_plans_model(tmp_path: Path) -> None:
    run = Run(RunConfig(plan=UserPlan((Phase(10, 0, 1),)), out_dir=tmp_path), tmp_path / "result.json")
    document = run.result.to_json()
    assert list(document)[:6] == ["schema", "kind", "model", "dbladder_version", "status", "started_at"]
    assert (run.result.kind, run.result.model, run.result.status) == ("users", "closed", "running")
    # The typed result reads the config's plan as typed parts; as JSON its phases are a list.
    assert document["config"]["users"] == {
        "phases": [{"users": 10, "ramp": 0, "hold": 1}],
        "think_min": 0.05,
        "think_max": 0.15,
    }
    assert run.result.config.users is not None and run.result.config.users.phases[0].users == 10


def test_a_ladders_ceiling_is_the_highest_step_held_before_the_first_failure(tmp_path: Path) -> None:
    result = finished(
        Ladder(100, 100, 3, 1), [row(100, True, 99), row(200, False, 150), row(300, True, 290)], tmp_path
    )
    assert (result["ceiling_rps"], result["peak_rps"]) == (100, 290)
    assert "ceiling_users" not in result and "search" not in result


def test_a_users_plans_headline_is_the_users_held_and_their_rate(tmp_path: Path) -> None:
    rows = [row(100, True, 95) | {"users": 10}, row(200, False, 120) | {"users": 20}]
    result = finished(UserPlan((Phase(10, 0, 1), Phase(20, 0, 1))), rows, tmp_path)
    assert (result["ceiling_users"], result["ceiling_rps"], result["peak_rps"]) == (10, 95, 120)


def test_a_searchs_headline_is_held_below_the_lowest_failed_whatever_the_order(tmp_path: Path) -> None:
    search = Search(start=100, budget=60)
    rows = [row(100, True, 99), row(200, False, 150), row(141, True, 140)]
    result = finished(search, rows, tmp_path, Stop("found", "found"))
    assert result["ceiling_rps"] == 141
    assert result["search"] == search.to_json() | {
        "held_rps": 141,
        "failed_rps": 200,
        "probes": 3,
        "ceiling_rests_on": {
            "rate_rps": 200,
            "levels": [2],
            "failed_twice": False,
            "words": "200 req/s failed once (level 2)",
        },
        "stopped_because": "found",
    }


def test_a_row_as_its_plan_sees_it() -> None:
    outcome = outcome_of(row(200, False, 150) | {"users": 20}, excused=True)
    assert (outcome.rate, outcome.passed, outcome.reasons, outcome.excused) == (200, False, ("p95",), True)
    assert (outcome.achieved, outcome.users) == (150, 20)
    # What a search reads to doubt a failure: the resource that failed it, each one's share of its bound.
    shares = {"service CPU": 1.1, "pool": 0.2}
    failed = outcome_of(
        row(200, False, 150) | {"diagnosis": {"resource": "service CPU"}, "resource_shares": shares}
    )
    assert (failed.limit, dict(failed.shares)) == ("service CPU", shares)
    assert outcome_of(row(100, True, 99) | {"diagnosis": {"resource": "pool"}}).limit is None


@pytest.mark.parametrize(
    ("plan", "words"),
    [
        (Ladder(50, 50, 2, 1.5), "climbing 2 levels from 50 req/s (+50 each, 1.5 s holds), shop: 0% writes"),
        (UserPlan((Phase(10, 0, 1),)), "users 10 (think 50-150 ms), shop: 0% writes"),
    ],
)
def test_the_load_in_one_line(plan: Any, words: str) -> None:
    shop = load_workload("shop")
    config = RunConfig(plan=plan, write_share=0.0)
    assert describe_load(config, shop, shop.mix(0.0)) == f"{words}, target http"


def test_the_run_fills_its_typed_result_and_keeps_the_order_it_was_filled_in(tmp_path: Path) -> None:
    run = Run(RunConfig(plan=Ladder(100, 100, 2, 1), out_dir=tmp_path), tmp_path / "result.json")
    run.update(
        workload=WorkloadAsRun.from_json({"name": "shop"}),
        engine=EngineAsRun.from_json({"engine": "sqlite", "transport": "file"}),
    )
    run.flag("first", "second")
    run.update(engine=run.result.engine.updated({"transport": "tcp"}) if run.result.engine else None)
    run.flag("third")
    run.save()
    on_disk = json.loads((tmp_path / "result.json").read_text())
    # engine was in the opening document and keeps its place; workload is new and comes last.
    assert list(on_disk)[9] == "engine" and list(on_disk)[-1] == "workload"
    assert on_disk["flags"] == ["first", "second", "third"]
    assert on_disk["engine"] == {"engine": "sqlite", "transport": "tcp"}
    assert run.result.workload is not None and run.result.workload.name == "shop"


def test_a_part_given_as_json_data_is_refused(tmp_path: Path) -> None:
    run = Run(RunConfig(plan=Ladder(100, 100, 2, 1), out_dir=tmp_path), tmp_path / "result.json")
    for fields in (
        {"workload": {"name": "shop"}},
        {"levels": [row(100, True, 100)]},
        {"levels": (row(100, True, 100),)},
    ):
        with pytest.raises(TypeError, match="given as JSON data"):
            run.update(**fields)
    # A figure, words and a mapping the result keeps as it is are typed as they are.
    run.update(peak_rps=10.0, status="complete", database_server={"settings": {}})
    assert (run.result.peak_rps, run.result.database_server) == (10.0, {"settings": {}})


def test_faults_and_a_struck_levels_flag_go_into_the_typed_rows_in_the_order_they_came(
    tmp_path: Path,
) -> None:
    run = Run(RunConfig(plan=Ladder(100, 100, 2, 1), out_dir=tmp_path), tmp_path / "result.json")
    rows = [{"index": index, "offered_rps": 100.0 * (index + 1), "passed": True} for index in range(2)]
    run.update(levels=typed(rows))
    record = {"fault": "kill-db@2", "kind": "kill-db", "level": 1, "second": 1.0, "state": "done"}
    run.add_faults([record], lambda index: [record] if index == 1 else [])
    run.flag_last_level("level 2: the database server was lost")
    document = run.result.to_json()
    assert document["faults"] == [record] and list(document)[-1] == "faults"
    assert "faults" not in document["levels"][0]
    assert document["levels"][1]["faults"] == [record]
    assert document["levels"][1]["flags"] == ["level 2: the database server was lost"]
    assert document["flags"] == ["faults were injected (kill-db@2): the ceiling is not a capacity figure"]


class Broken(Exception):
    """A bug's exception: no DbladderError."""


@pytest.mark.parametrize(
    ("error", "status", "because"),
    [
        (RequestFileError("r.py: the request 'a': one\nr.py: the request 'b': two"), "refused",
         "r.py: the request 'a': one; r.py: the request 'b': two"),
        (AppSetupFailed("the app's setup exited with code 3"), "failed",
         "the app's setup exited with code 3"),
        (KeyboardInterrupt(), "interrupted", "interrupted by the user (Ctrl-C)"),
        (Broken("no such key"), "failed", "Broken: no such key"),
    ],
)  # fmt: skip
def test_a_run_stopped_by_an_error_after_its_first_save_is_ended_with_why(
    tmp_path: Path, error: BaseException, status: str, because: str
) -> None:
    path = tmp_path / "result.json"
    with pytest.raises(type(error)), ended_on_error(path):
        run = Run(RunConfig(plan=Ladder(100, 100, 2, 1), out_dir=tmp_path), path)
        run.update(levels=typed([row(100, True, 100)]))
        run.save()
        raise error
    on_disk = json.loads(path.read_text())
    assert (on_disk["status"], on_disk["stopped_because"]) == (status, because)
    assert on_disk["finished_at"] is not None and len(on_disk["levels"]) == 1  # the finished level kept
    assert read_result(on_disk).status == status  # the typed result reads it


def test_a_result_the_run_did_not_write_or_finished_itself_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    earlier = Run(RunConfig(plan=Ladder(100, 100, 2, 1), out_dir=tmp_path), path)
    earlier.save()  # an earlier run in the same folder, killed: still "running"
    before = path.read_bytes()
    with pytest.raises(UsageError), ended_on_error(path):
        raise UsageError("refused before its first save")
    assert path.read_bytes() == before
    with pytest.raises(AppExited), ended_on_error(path):
        run = Run(RunConfig(plan=Ladder(100, 100, 2, 1), out_dir=tmp_path), path)
        run.finish("app exited", "level 1: ...")  # the round ended it itself, then raised
        raise AppExited("level 1: ...")
    assert json.loads(path.read_text())["status"] == "app exited"
