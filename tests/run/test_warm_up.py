"""The warm-up before the first level (dbladder.run.warm_up), against a known server: a FIFO of
2 ms a request whose first request for each path costs 20 ms more. Its first hits therefore take
22 ms (one at a time: nothing queues) and every later answer 2 ms, so the record's figures are
known; a time limit shorter than the first hits ends it there, said so."""

from __future__ import annotations

import asyncio

import pytest
from known_servers import known_server

from dbladder.app.requests import Param, Request, Requests
from dbladder.app.workload import AppWorkload
from dbladder.plans import Search
from dbladder.report.warm_up import request_words, warm_up_lines
from dbladder.result.context import WarmedRequest, WarmUpRecord
from dbladder.result.passmark import PassMark
from dbladder.result.schema import RESULT_SCHEMA, problem
from dbladder.run.config import RunConfig
from dbladder.run.progress import QuietProgress
from dbladder.run.round import run_round
from dbladder.run.warm_up import SETTLED, TIME_LIMIT, WarmUpRule, _Tally, first_hits, judge_of, warm_up
from dbladder.workloads.registry import load_workload

ROWS = list(range(1, 51))


def app_workload(rows: list[int] = ROWS) -> AppWorkload:
    declared = Requests(
        requests=[
            Request("home", "GET", "/"),
            Request(
                "item", "GET", "/items/{id}", weight=9, params={"id": Param.rows("SELECT id FROM items")}
            ),
            Request(
                "note",
                "POST",
                "/notes",
                form={"on": "{id}"},
                params={"id": Param.rows("SELECT id FROM items")},
            ),
        ]
    )
    return AppWorkload(declared, {"SELECT id FROM items": rows})


def test_the_first_hits_are_every_request_once_and_each_distinct_value_of_a_path_parameter():
    hits = first_hits(app_workload([3, 1, 3, 2]), {}, bound=500)
    assert [index for index, _ in hits] == [0, 1, 1, 1, 2]  # a form's value makes no page of its own
    assert [args[1] for index, args in hits if index == 1] == [3, 1, 2]  # distinct, in the rows' order


def test_the_first_hits_of_a_parameter_stop_at_the_bound():
    hits = first_hits(app_workload(), {}, bound=20)
    assert sum(index == 1 for index, _ in hits) == 20


class Recorded(QuietProgress):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


@pytest.mark.serial
def test_the_record_shows_each_requests_first_hit_against_its_settled_latency():
    workload, progress = app_workload(), Recorded()
    with known_server("fifo", service_ms=2.0, cold_ms=20.0) as server:
        record = asyncio.run(
            warm_up("127.0.0.1", server.port, workload, {}, WarmUpRule(30.0), judge_of(workload), progress)
        ).to_json()
    assert record["stopped_because"] == SETTLED and record["settled"]
    assert record["first_hits"] == 1 + 50 + 1
    rows = {row["request"]: row for row in record["by_request"]}
    item = rows["item"]
    assert item["first_hits"] == 50 and item["failed"] == 0
    # 22 ms a first hit, 2 ms warm; a loaded machine adds a few ms to either, never 15.
    assert 21 <= item["first_ms"] <= 35, item
    assert 1.9 <= item["settled_ms"] <= 8, item
    assert rows["note"]["first_ms"] >= 21  # its one path's first hit
    assert record["requests"] >= record["first_hits"] + 3 * 20  # two windows of 10 each, at least
    words = request_words(WarmedRequest.from_json(item))
    assert words.startswith("item: first 2") and ", settled " in words
    assert progress.lines[-4:] == warm_up_lines(WarmUpRecord.from_json(record))


@pytest.mark.serial
def test_a_time_limit_shorter_than_the_first_hits_ends_the_warm_up_there():
    workload = app_workload()
    with known_server("fifo", service_ms=2.0, cold_ms=20.0) as server:
        record = asyncio.run(
            warm_up(
                "127.0.0.1", server.port, workload, {}, WarmUpRule(0.3), judge_of(workload), QuietProgress()
            )
        ).to_json()
    assert record["stopped_because"] == TIME_LIMIT and not record["settled"]
    assert 0.3 <= record["seconds"] < 1.0
    assert 5 <= record["requests"] < 52  # about 14 first hits of 22 ms fit in 0.3 s
    assert (
        "stopped at its 0.3 s limit with home, item, note not settled"
        in warm_up_lines(WarmUpRecord.from_json(record))[0]
    )


@pytest.mark.slow
def test_dbladders_own_service_can_be_warmed_and_its_search_start_calibrated(sqlite_url, tmp_path):
    # The built-in shop, freshly seeded: the library's warm-up and calibration, which the CLI
    # leaves off for it (its published rounds were taken cold), work on it as on an app.
    search = Search(start=500, hold=1.5, warmup=0.5, settle=0.5, budget=2.0)  # room for one probe
    config = RunConfig(
        db_url=sqlite_url, plan=search, sizes={"products": 2000, "orders": 5000}, workers=1, pool_size=8,
        out_dir=tmp_path / "out", warm_up_s=20.0, calibrate=True, pass_mark=PassMark(5000, 100),
    )  # fmt: skip
    result = run_round(config).to_json()
    warm = result["warmup"]
    assert [row["request"] for row in warm["by_request"]] == [
        op.name for op in load_workload("shop").operations
    ]
    assert warm["first_hits"] == len(warm["by_request"])  # each operation once: no Param.rows to visit
    assert all(row["first_hits"] == 1 and row["answers"] > 1 for row in warm["by_request"])
    calibration = result["search"]["calibration"]
    assert calibration["estimate_rps"] > 0 and calibration["start_rps"] == result["levels"][0]["offered_rps"]
    assert result["config"]["search"]["start"] == calibration["start_rps"]
    assert problem(result, RESULT_SCHEMA) is None


def test_a_request_settles_when_its_last_windows_median_is_within_15_percent_of_the_one_before():
    rule = WarmUpRule(10.0)
    tally = _Tally("page", later=[50.0] * 10 + [20.0] * 10)
    assert not tally.check(rule)  # 20 ms after 50: still warming
    tally.later += [22.0] * 10
    assert tally.check(rule)  # 22 after 20: within 15 %
    assert _Tally("tiny", later=[0.2] * 10 + [0.6] * 10).check(rule)  # within 0.5 ms: loopback's jitter


def test_a_warm_up_ended_by_its_answer_limit_names_the_requests_that_did_not_settle():
    record = {"seconds": 3.0, "requests": 210, "first_hits": 2, "stopped_because": "answer limit",
              "answer_limit": 100, "by_request": [{"request": "page", "settled": False}]}  # fmt: skip
    assert warm_up_lines(WarmUpRecord.from_json(record))[0].endswith(
        "one at a time; page not settled within 100 answers"
    )
