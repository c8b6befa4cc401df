"""A level's machine figures as the reports find them (`dbladder.report.figures`)."""

from __future__ import annotations

import copy
import re

import pytest
from report_support import FLAT, NESTED, fake_result, levels_table, texts


@pytest.mark.parametrize("machine", [NESTED, FLAT], ids=["nested", "flat"])
def test_machine_figures_become_columns_and_cpu_lines(machine):
    result = fake_result()
    result["levels"][0]["machine"] = copy.deepcopy(machine)
    result["levels"][1]["service_breakdown"] = {
        "timed_requests": 300,
        "pool_wait_mean_ms": 0.5,
        "pool_wait_p95_ms": 2.0,
        "database_mean_ms": 1.25,
        "other_mean_ms": 0.75,
        "pool_wait_share": 0.2,
    }
    md, page = texts([result])
    rows = levels_table(md)
    assert rows[0]["host usr %"] == "42" and rows[0]["host steal %"] == "0" and rows[0]["host idle %"] == "37"
    assert rows[0]["service CPU %"] == "88" and rows[0]["db CPU %"] == "55"
    assert rows[0]["service CPU ms/1k"] == "410.5" and rows[0]["db CPU ms/1k"] == "250.2"
    assert rows[0]["gen CPU %"] == "30" and rows[0]["load"] == "1.5"
    assert rows[1]["host usr %"] == "-" and rows[1]["db CPU %"] == "-"
    assert rows[1]["gen CPU %"] == "25"  # no sample: the generator's own cpu_share
    assert rows[1]["pool wait ms"] == "0.50" and rows[1]["in db ms"] == "1.25" and rows[0]["other ms"] == "-"
    assert "not measured in this run" not in md
    cpu = page.split('data-plot="cpu"', 1)[1].split("</figure>", 1)[0]
    assert re.search(r'data-key="database_cpu_pct".*?data-x="500" data-y="55"', cpu)
    assert re.search(r'data-key="service_cpu_pct".*?data-x="500" data-y="88"', cpu)
    assert "not measured in this run" not in cpu


def test_a_group_the_sampler_could_not_see_reads_not_measured():
    result = fake_result()
    for level in result["levels"]:
        level["machine"] = {**FLAT, "database_cpu_pct": None, "database_cpu_ms_per_1k": None}
    md, page = texts([result])
    assert "db CPU %" not in md and "service CPU %" in md
    cpu = page.split('data-plot="cpu"', 1)[1].split("</figure>", 1)[0]
    assert cpu.count("not measured in this run") == 1  # the database panel


def test_without_machine_figures_the_cpu_plot_and_table_say_not_measured():
    md, page = texts([fake_result()])
    assert "service CPU %" not in md and "host usr %" not in md
    assert "- CPU of the host, the service and the database: not measured in this run." in md
    cpu = page.split('data-plot="cpu"', 1)[1].split("</figure>", 1)[0]
    assert cpu.count("not measured in this run") == 2  # the database and service panels
    assert 'data-key="generator_cpu_pct"' in cpu
