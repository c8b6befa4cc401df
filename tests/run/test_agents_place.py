"""The load agents' place (dbladder.run.agents_place): the flags a lost agent leaves on the run."""

from __future__ import annotations

from typing import Any

from dbladder.result.level import Level
from dbladder.run.agents_place import lost_agent_flags


def level(index: int, **hosts: dict[str, Any]) -> Level:
    return Level.from_json({"index": index, "hosts": hosts})


def test_a_lost_agent_is_flagged_from_the_first_level_its_host_was_not_measured_in():
    levels = [
        level(0, **{"db-1": {"role": "db", "busy": 40.0}, "app-1": {"role": "app", "busy": 10.0}}),
        level(1, **{"db-1": {"measured": False, "cause": "agent lost: gone"}, "app-1": {"busy": 12.0}}),
        level(2, **{"db-1": {"measured": False, "cause": "agent lost: gone"}}),
    ]
    lost = {"db-1": "it stopped answering", "app-1": "its process exited"}
    assert lost_agent_flags(lost, levels) == [
        "agent db-1 was lost (it stopped answering): its host's figures are not measured from level 2 on",
        # Lost after the last level: every level measured it, so no level is named.
        "agent app-1 was lost (its process exited): its host's figures are not measured",
    ]


def test_no_agent_lost_is_no_flag_and_a_level_without_hosts_is_no_level_missed():
    assert lost_agent_flags({}, [level(0, **{"db-1": {"measured": False}})]) == []
    assert lost_agent_flags({"db-1": "gone"}, [Level.from_json({"index": 0})]) == [
        "agent db-1 was lost (gone): its host's figures are not measured"
    ]
