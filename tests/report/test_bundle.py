"""Bundles read, checked and rendered (`dbladder.report.bundle`)."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest
from cli_support import dbladder as run_dbladder
from report_support import caveat_leads, fake_result, with_ceiling

from dbladder.errors import CorruptBundle, MissingBundle, UnknownBundleVersion
from dbladder.report.bundle import build_reports, load_bundle, write_bundle
from dbladder.report.result_table import comparison_table
from dbladder.result.schema import problem


def test_missing_corrupt_and_unknown_bundles_raise_their_own_errors(tmp_path):
    with pytest.raises(MissingBundle, match="no such folder"):
        load_bundle(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingBundle, match=r"holds neither result\.json nor compare\.json"):
        load_bundle(tmp_path / "empty")
    assert MissingBundle.exit_code == 2

    folder = tmp_path / "bundle"
    write_bundle(fake_result(), folder)
    text = (folder / "result.json").read_text()
    (folder / "result.json").write_text(text[: len(text) // 2])
    with pytest.raises(CorruptBundle, match="is not valid JSON"):
        load_bundle(folder)

    broken = fake_result()
    broken["levels"][1]["p95_ms"] = "fast"
    (folder / "result.json").write_text(json.dumps(broken))
    with pytest.raises(CorruptBundle, match=r"levels\[1\]\.p95_ms: 'fast' is not of type 'number'"):
        load_bundle(folder)

    (folder / "result.json").write_text(json.dumps({**fake_result(), "schema": "dbladder.result/99"}))
    with pytest.raises(UnknownBundleVersion, match=r"schema 'dbladder.result/99', which this dbladder"):
        load_bundle(folder)
    assert UnknownBundleVersion.exit_code == 2


dbladder = partial(run_dbladder, timeout=60)


@pytest.mark.slow
def test_the_report_command_errors_are_one_line_with_usage_exit_code(tmp_path):
    result = dbladder("report", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert result.stderr == f"Error: no bundle at {tmp_path / 'nowhere'}: no such folder\n"
    write_bundle(fake_result(), tmp_path / "a")
    write_bundle(fake_result("postgresql"), tmp_path / "b")
    result = dbladder("report", str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.returncode == 2
    assert result.stderr == "Error: several bundles make one comparison report: give --out DIR for it\n"
    result = dbladder("report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "a"))
    assert result.returncode == 2
    assert "holds a single run's result.json" in result.stderr
    (tmp_path / "a" / "result.json").write_text("{}")
    result = dbladder("report", str(tmp_path / "a"))
    assert result.returncode == 2
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "schema None" in result.stderr


def test_a_bundle_renders_the_same_report_every_time(tmp_path):
    write_bundle(fake_result(), tmp_path / "a")
    first = (tmp_path / "a" / "report.md").read_text(), (tmp_path / "a" / "report.html").read_text()
    build_reports([tmp_path / "a"], tmp_path / "a")
    assert ((tmp_path / "a" / "report.md").read_text(), (tmp_path / "a" / "report.html").read_text()) == first
    written = build_reports([tmp_path / "a" / "result.json"], tmp_path / "copy")
    assert [path.name for path in written] == [
        "result.json",
        "timeseries.csv",
        "levels.csv",
        "report.md",
        "report.html",
    ]
    assert (tmp_path / "copy" / "report.md").read_text() == first[0]


def test_a_compare_json_as_dbladder_compare_writes_it_validates_and_renders(tmp_path):
    runs = []
    for number in (1, 2, 3):
        for label, engine, held in (("sqlite", "sqlite", 2), ("postgresql", "postgresql", 1)):
            result = with_ceiling(fake_result(engine, (1, 1, 1)), held)
            result["config"]["seed"] = None  # the comparison restored the data, the run loaded nothing
            result.update(
                label=label, run=number, fresh={"run": number, "method": "restore", "seconds": 0.25}
            )
            runs.append(result)
    document = {
        "schema": "dbladder.compare/2",
        "kind": "compare",
        "dbladder_version": "0.1.0",
        "created_at": "2026-01-02T03:04:05+00:00",
        "status": "complete",
        "databases": [
            {"label": "sqlite", "db_url": "sqlite:///a.db"},
            {"label": "postgresql", "db_url": "x"},
        ],
        "runs_per_database": 3,
        "preparation": {"sqlite": {"method": "restore"}, "postgresql": {"method": "restore"}},
        "runs": runs,
        "finished_at": "2026-01-02T03:14:05+00:00",
    }
    assert problem(document, "dbladder.compare/2") is None
    folder = tmp_path / "compare"
    folder.mkdir()
    text = json.dumps(document, indent=2) + "\n"
    (folder / "compare.json").write_text(text)
    written = build_reports([folder], folder)
    assert [path.name for path in written] == ["timeseries.csv", "levels.csv", "report.md", "report.html"]
    assert (folder / "compare.json").read_text() == text  # the writer's fields are kept
    md = (folder / "report.md").read_text()
    assert md.startswith("# sqlite vs postgresql\n")
    assert "| quick: 20 % writes, 500 to 1,500 req/s | 3 | 1,000 / 1,000 / 1,000 req/s (median 1,000) |" in md
    assert "| sqlite +100 % |" in md
    assert "### sqlite, run 3: quick" in md
    assert "the data as seeded, given back by restore before the run in 0.2 s" in md
    assert "**Data restored.** sqlite and postgresql started every run from the data as seeded" in md
    leads = caveat_leads(runs)
    assert "Data restored." in leads and "Data not fresh." not in leads
    assert comparison_table(runs)[0] == ["test", "runs", "sqlite", "postgresql", "difference"]


def test_the_fake_results_use_only_documented_fields():
    documented = set(
        re.findall(
            r"^\| `([^`]+)` \|",
            (Path(__file__).parents[2] / "docs" / "result-schema.md").read_text(),
            re.M,
        )
    )
    result = fake_result()
    assert {key for key in result} <= documented
    assert {f"levels[].{key}" for key in result["levels"][0]} <= documented


def test_a_bundle_of_the_previous_release_rebuilds_its_reports(tmp_path):
    # result.json as the release before the typed result wrote it (a users run), untouched.
    previous = Path(__file__).parents[1] / "result" / "fixtures" / "previous-release-users.json"
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "result.json").write_bytes(previous.read_bytes())
    written = build_reports([tmp_path / "old"], tmp_path / "again")
    assert [path.name for path in written][-3:] == ["levels.csv", "report.md", "report.html"]
    md = (tmp_path / "again" / "report.md").read_text()
    assert md.startswith("# SQLite 3.54.1: held 20 users, 196 req/s (no level failed)\n")
    assert "| users-read: 5 % writes, 10 to 20 users | 1 | ≥ 20 users: 196 req/s |" in md
    assert (tmp_path / "again" / "result.json").read_bytes() == previous.read_bytes()


def test_a_bundle_with_a_newer_releases_keys_reports_as_without_them_and_keeps_them(tmp_path):
    # The schema lets a newer release add a key without a new version: this one shows what it knows,
    # the same as without the key, and writes the new key back where it was.
    write_bundle(fake_result(), tmp_path / "plain")
    document = json.loads((tmp_path / "plain" / "result.json").read_text())
    newer = {"newer_top": [1, 2], **document, "config": {"newer_setting": 3, **document["config"]}}
    newer["levels"][0]["newer_figure"] = 0.5
    (tmp_path / "newer").mkdir()
    (tmp_path / "newer" / "result.json").write_text(json.dumps(newer, indent=2) + "\n")
    build_reports([tmp_path / "newer"], tmp_path / "again")
    for name in ("report.md", "report.html"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    # levels.csv has a column per key of a level, as written: the newer one too.
    assert (tmp_path / "again" / "levels.csv").read_text().splitlines()[0].endswith(",newer_figure")
    assert (tmp_path / "again" / "result.json").read_bytes() == (
        tmp_path / "newer" / "result.json"
    ).read_bytes()


def test_a_key_where_the_schema_allows_none_is_refused_in_one_line_naming_it(tmp_path):
    # The parts keep a key they do not declare only where the schema allows one; where it does not
    # (the database's size on disk), the bundle fails its check before any part reads it.
    write_bundle(fake_result(), tmp_path / "plain")
    document = json.loads((tmp_path / "plain" / "result.json").read_text())
    document["storage"] = {"size_bytes": 155648, "memory_cap_bytes": None, "newer": 1}
    (tmp_path / "plain" / "result.json").write_text(json.dumps(document))
    result = run_dbladder("report", str(tmp_path / "plain"), "--out", str(tmp_path / "out"))
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "storage: Additional properties are not allowed ('newer' was unexpected)" in result.stderr
