"""The plots of a round (`dbladder.report.plots`)."""

from __future__ import annotations

import re

from report_support import fake_result, texts


def test_a_search_reports_its_bracket_and_plots_every_probe_in_order():
    result = fake_result("sqlite", (1, 1, 1))
    # Probes ran 500, 1,500 (failed), 1,000: the ceiling is 1,000, the lowest failure 1,500.
    levels = result["levels"]
    levels[1], levels[2] = levels[2], levels[1]
    levels[1]["passed"], levels[1]["reasons"] = False, ["p95 99.0 ms is not under 50 ms"]
    for number, level in enumerate(levels):
        level["index"] = number
    result["config"]["search"] = {"start": 500, "factor": 2, "resolution": 0.05, "hold": 1.5, "warmup": 0.5}
    result["search"] = {"held_rps": 1000, "failed_rps": 1500, "probes": 3, "stopped_because": "budget"}
    result["ceiling_rps"] = 1000
    md, page = texts([result])
    assert (
        "SQLite 3.54.1 held 1,000 req/s; 1,500 req/s failed (p95 99.0 ms is not under 50 ms), "
        "found in 3 probes." in md
    )
    assert "**Precision is the search's last bracket.**" in md and "held 1,000 req/s and failed 1,500" in md
    probes = re.search(r'data-plot="probes".*?</figure>', page, re.S)
    assert probes is not None
    # The probes plot has the rates in the order run; the rate plots join them in order of rate.
    assert re.findall(r'data-key="offered_rps".*?</g>', probes.group(0), re.S)
    xs = [float(x) for x in re.findall(r'data-x="([\d.]+)"', probes.group(0))]
    ys = [float(y) for y in re.findall(r'data-y="([\d.]+)" data-failed', probes.group(0))]
    assert xs[:3] == [1.0, 2.0, 3.0] and ys[:3] == [500.0, 1500.0, 1000.0]
