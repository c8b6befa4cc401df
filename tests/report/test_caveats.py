"""What the result does not show (`dbladder.report.caveats`)."""

from __future__ import annotations

from report_support import caveat_leads, fake_result, texts


def test_steal_is_a_caveat_when_high_and_says_not_measured_when_absent():
    result = fake_result()
    assert "CPU steal not measured." in caveat_leads([result])
    for level, steal in zip(result["levels"], (0.5, 7.25, 1.0), strict=True):
        level["machine"] = {
            "host": {"usr": 40.0, "sys": 20.0, "iowait": 0.0, "idle": 40.0 - steal, "steal": steal}
        }
    leads = caveat_leads([result])
    assert "CPU steal not measured." not in leads
    assert leads["CPU steal."].startswith("Steal reached 7.2 % of the CPU at level 2 of SQLite 3.54.1")
    for level in result["levels"]:
        level["machine"]["host"]["steal"] = 0.0
    assert "CPU steal." not in caveat_leads([result])


def test_weaker_durability_and_generator_flags_are_caveats():
    result = fake_result()
    result["engine"]["durable"] = False
    result["engine"]["durability_note"] = "synchronous=NORMAL"
    result["levels"][1]["flags"] = ["generator fell behind: schedule lag p99 5.8 ms is above 2 ms"]
    result["levels"][2]["flags"] = ["generator fell behind: schedule lag p99 3.1 ms is above 2 ms"]
    leads = caveat_leads([result])
    assert "synchronous=NORMAL" in leads["Durability not equal."]
    assert leads["Generator flagged."].startswith(
        "At levels 2, 3 of SQLite 3.54.1 the load generator fell behind"
    )
    md, _ = texts([result])
    assert "| durable | NO: synchronous=NORMAL |" in md


def test_a_known_database_size_and_memory_say_whether_it_fits():
    result = fake_result(environment={"python": "3.11", "platform": "Linux", "memory_total_bytes": 8 * 2**30})
    result["seeding"]["database_bytes"] = 3 * 2**30
    assert (
        "(3,072 MiB) fits in the machine's memory (8.0 GiB)" in caveat_leads([result])["Dataset in memory."]
    )
    result["seeding"]["database_bytes"] = 9 * 2**30
    assert "does not fit" in caveat_leads([result])["Dataset larger than memory."]
