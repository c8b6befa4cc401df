"""levels.csv and timeseries.csv (`dbladder.report.csvfiles`)."""

from __future__ import annotations

from report_support import fake_result, read_csv

from dbladder.report.bundle import build_reports, load_bundle, write_bundle


def test_samples_go_to_timeseries_csv_and_a_comparison_tags_them_by_run(tmp_path):
    samples = [{"t": 1.0, "interval": 1.0, "host_usr": 40.5}, {"t": 2.0, "interval": 1.0, "host_usr": 42.0}]
    write_bundle(fake_result("sqlite"), tmp_path / "a", samples)
    write_bundle(fake_result("postgresql"), tmp_path / "b")
    rows = read_csv(tmp_path / "a" / "timeseries.csv")
    assert rows == [
        {"t": "1.0", "interval": "1.0", "host_usr": "40.5"},
        {"t": "2.0", "interval": "1.0", "host_usr": "42.0"},
    ]
    assert (tmp_path / "b" / "timeseries.csv").read_text() == "t\n"
    assert "timeseries.csv (2 per-second samples)" in (tmp_path / "a" / "report.md").read_text()
    build_reports([tmp_path / "a", tmp_path / "b"], tmp_path / "c")
    tagged = read_csv(tmp_path / "c" / "timeseries.csv")
    assert [row["engine"] for row in tagged] == ["SQLite 3.54.1", "SQLite 3.54.1"]
    assert [row["run_index"] for row in tagged] == ["0", "0"]
    again = load_bundle(tmp_path / "c")
    assert again.kind == "compare" and [len(s) for s in again.samples] == [2, 0]
    assert again.samples[0][0] == {"t": "1.0", "interval": "1.0", "host_usr": "40.5"}


def test_a_level_s_lists_of_objects_stay_in_the_json_and_its_figures_go_to_levels_csv(tmp_path):
    result = fake_result("sqlite")
    result["levels"][0]["machine"] = {
        "service_cpu_pct": 80.0,
        "service_by_process": [{"pid": 7, "role": "worker", "cpu_pct": 80.0}],
        "groups": ["generator", "service"],
    }
    write_bundle(result, tmp_path / "a")
    row = read_csv(tmp_path / "a" / "levels.csv")[0]
    assert row["machine_service_cpu_pct"] == "80.0"
    assert row["machine_groups"] == "generator; service"
    assert not any(key.startswith("machine_service_by_process") for key in row)
