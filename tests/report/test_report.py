"""Bundles from real short runs: every file is there, and the reports' figures are result.json's.

Two real runs on a small SQLite (every connection writing, then one writer connection) are made
once for the suite; the Markdown and the HTML of each are read back and compared with its
result.json figure by figure, the two are compared with `dbladder report`, and headless Chromium
renders the page (skipped with the reason when `chromium` is missing, except under CI). Two more
real runs take the closed model ("Postgres vs MariaDB on two dedicated CPUs", db-wars): a users
round and a spike, read back the same way.
"""

from __future__ import annotations

import csv
import json
import re
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM_FLAGS, chromium
from once_support import made_once

from dbladder.plans import Ladder, UserPlan
from dbladder.report.bundle import write_bundle
from dbladder.report.runs import engine_label
from dbladder.result.schema import RESULT_SCHEMA, problem
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

# Every test here reads bundles of real runs, made once for the suite (about 25 s together), by
# whichever of the parallel part's workers first asks (tests/once_support.py).
pytestmark = pytest.mark.slow

DOC = Path(__file__).parents[2] / "docs" / "result-schema.md"


@pytest.fixture(scope="session")
def bundles(tmp_path_factory) -> list[Path]:
    """Two bundles from real runs: the same round on SQLite, all connections writing vs one writer."""

    def make(folder: Path) -> None:
        for writers in (0, 1):
            root = folder / f"writers{writers}"
            config = RunConfig(
                db_url=f"sqlite:///{root}/shop.db",
                preset="quick",
                plan=Ladder(100, 100, 2, 1.5, warmup=0.5),
                sizes={"products": 2000, "orders": 5000},
                workers=1,
                pool_size=8,
                engine_settings={"sqlite_writers": writers},
                out_dir=root / "out",
            )
            root.mkdir()
            result = run_round(config).to_json()
            write_bundle(result, config.out_dir)

    folder = made_once(tmp_path_factory, "report_bundles", make)
    return [folder / f"writers{writers}" / "out" for writers in (0, 1)]


def result_of(bundle: Path) -> dict[str, Any]:
    return json.loads((bundle / "result.json").read_text())


def number(text: str) -> float:
    return float(text.removesuffix(" req/s").replace(",", "").lstrip("≥< "))


def close(shown: str, value: float) -> bool:
    """A figure as the report prints it (rounded to its format) against result.json's value."""
    tolerance = 0.5 if abs(value) >= 100 else 0.05
    return abs(number(shown) - value) <= tolerance + 1e-9


LEVEL_FIGURES = {
    "level": lambda level: level["index"] + 1,
    "offered req/s": lambda level: level["offered_rps"],
    "achieved req/s": lambda level: level["achieved_rps"],
    "p50 ms": lambda level: level["p50_ms"],
    "p95 ms": lambda level: level["p95_ms"],
    "p99 ms": lambda level: level["p99_ms"],
    "max ms": lambda level: level["max_ms"],
    "fail %": lambda level: level["fail_pct"],
    "dropped": lambda level: level["dropped"],
}


def check_level_table(header: list[str], rows: list[list[str]], result: dict[str, Any]) -> None:
    assert len(rows) == len(result["levels"])
    for row, level in zip(rows, result["levels"], strict=True):
        cells = dict(zip(header, row, strict=True))
        for column, figure in LEVEL_FIGURES.items():
            assert close(cells[column], figure(level)), (column, cells[column], figure(level))
        assert cells["result"].rstrip("*") == ("pass" if level["passed"] else "FAIL")
        assert cells["result"].endswith("*") == bool(level["flags"])


# -- Markdown -------------------------------------------------------------------------------------------


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    tables = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("| ---"):
            header = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows = []
            for body in lines[i + 2 :]:
                if not body.startswith("|"):
                    break
                rows.append([cell.strip() for cell in body.strip("|").split(" | ")])
            tables.append((header, rows))
    return tables


def test_a_run_leaves_a_complete_bundle(bundles):
    for bundle in bundles:
        for name in ("result.json", "levels.csv", "timeseries.csv", "report.md", "report.html"):
            assert (bundle / name).is_file(), name
        with (bundle / "timeseries.csv").open(newline="") as stream:
            assert next(csv.reader(stream))  # a header, with or without samples


def test_the_markdown_shows_the_result_first_and_figures_from_result_json(bundles):
    for bundle in bundles:
        result = result_of(bundle)
        text = (bundle / "report.md").read_text()
        label = engine_label(result)
        headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
        assert headings == ["Result", "Setup", "Levels", "What this does not show"]
        tables = markdown_tables(text)
        header, rows = tables[0]
        assert header == ["round", "runs", label]
        ceiling = rows[0][2]
        assert number(ceiling) == (result["ceiling_rps"] or result["levels"][0]["offered_rps"])
        level_tables = [(h, r) for h, r in tables if h[0] == "level" and h[1] != "operation"]
        assert [h[:2] for h, _ in tables if h[:2] == ["level", "operation"]] == [["level", "operation"]]
        assert len(level_tables) == 1
        check_level_table(*level_tables[0], result)
        assert f"PRAGMA synchronous = {result['engine']['durability']['synchronous']};" in text
        assert f"| connection pool | {result['config']['pool_size']} connections in all |" in text


# -- HTML -----------------------------------------------------------------------------------------------


class Page(HTMLParser):
    """The parts of report.html a test compares: tables (by class), plots and their points, URLs."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.plots: list[str] = []
        self.points: list[dict[str, str]] = []
        self.references: list[str] = []
        self._plot = ""
        self._series: dict[str, str] = {}
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        self.references += [value for name, value in attributes.items() if name in ("src", "href")]
        if tag == "table":
            self.tables.append((attributes.get("class", ""), []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "figure" and "data-plot" in attributes:
            self._plot = attributes["data-plot"]
            self.plots.append(self._plot)
        elif tag == "g" and "data-series" in attributes:
            self._series = attributes
        elif "point" in attributes.get("class", "").split():
            self.points.append({"plot": self._plot, **self._series, **attributes})

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_the_html_tables_and_plotted_points_are_result_jsons_figures(bundles):
    for bundle in bundles:
        result = result_of(bundle)
        page = Page((bundle / "report.html").read_text())
        levels = [rows for kind, rows in page.tables if kind == "levels"]
        assert len(levels) == 1
        check_level_table(levels[0][0], levels[0][1:], result)
        by_key: dict[str, list[tuple[float, float]]] = {}
        for point in page.points:
            by_key.setdefault(point["data-key"], []).append((float(point["data-x"]), float(point["data-y"])))
        for key in ("achieved_rps", "p50_ms", "p95_ms", "p99_ms", "fail_pct"):
            expected = [(level["offered_rps"], level[key]) for level in result["levels"]]
            drawn = by_key[key]
            if key.endswith("_ms"):  # a log axis has no place for 0
                expected = [(x, y) for x, y in expected if y > 0]
            assert [x for x, _ in drawn] == [x for x, _ in expected], key
            assert [y for _, y in drawn] == pytest.approx([y for _, y in expected], rel=1e-5), key
        failed = [point["data-failed"] == "true" for point in page.points if point["data-key"] == "p95_ms"]
        assert failed == [not level["passed"] for level in result["levels"] if level["p95_ms"] > 0]


def test_the_html_has_its_plots_and_nothing_to_fetch(bundles):
    text = (bundles[0] / "report.html").read_text()
    page = Page(text)
    assert page.plots == ["throughput", "latency", "failures", "cpu", "operations", "seconds"]
    # a p95 panel per shop operation, and the levels second by second: p95 and answers
    assert text.count('<svg class="chart"') == 1 + 3 + 1 + 3 + 4 + 2
    assert page.references == []
    assert not re.search(r"https?://|@import|url\(|<script|<link|<img", text)
    pass_marks = re.findall(r'data-mark="pass" data-y="([^"]+)"', text)
    # the p95 panel, the failed-% plot, each operation's p95, the p95 of each second
    assert pass_marks == ["50", "1"] + ["50"] * 4 + ["50"]
    ceiling = result_of(bundles[0])["ceiling_rps"]
    if ceiling is not None:
        assert text.count(f'data-mark="ceiling" data-x="{ceiling:g}"') == 1 + 3 + 1 + 3 + 4


def test_levels_csv_holds_every_level(bundles):
    result = result_of(bundles[0])
    with (bundles[0] / "levels.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [int(row["index"]) for row in rows] == [level["index"] for level in result["levels"]]
    for row, level in zip(rows, result["levels"], strict=True):
        assert row["engine"] == engine_label(result) and row["run"] == "1"
        for key in ("offered_rps", "achieved_rps", "p50_ms", "p95_ms", "p99_ms", "fail_pct"):
            assert float(row[key]) == level[key]
        assert float(row["sent_p95_ms"]) == level["sent"]["p95_ms"]
        assert row["passed"] == str(level["passed"])
        assert "histograms_latency_from_due_count" not in row


# -- the schema against real results -------------------------------------------------------------------


def test_real_results_validate_and_use_only_documented_fields(bundles):
    documented = set(re.findall(r"^\| `([^`]+)` \|", DOC.read_text(), re.MULTILINE))
    for bundle in bundles:
        result = result_of(bundle)
        assert problem(result, RESULT_SCHEMA) is None
        assert sorted(set(result) - documented) == []
        for block in ("config", "engine", "service", "seeding"):
            keys = {f"{block}.{key}" for key in result[block] or {}}
            assert sorted(keys - documented) == [], block
        for level in result["levels"]:
            assert sorted({f"levels[].{key}" for key in level} - documented) == []


# -- comparison ------------------------------------------------------------------------------------------


def test_the_report_command_compares_two_bundles(bundles, tmp_path):
    out = tmp_path / "compare"
    command = [sys.executable, "-c", "from dbladder.cli import main; main()", "report", *map(str, bundles)]
    done = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    names = ["compare.json", "timeseries.csv", "levels.csv", "report.md", "report.html"]
    assert done.stdout.splitlines() == [f"wrote    {out / name}" for name in names]
    compare = json.loads((out / "compare.json").read_text())
    assert compare["schema"] == "dbladder.compare/2"
    assert compare["runs"] == [result_of(bundle) for bundle in bundles]
    labels = [engine_label(result_of(bundle)) for bundle in bundles]
    assert labels[1] == labels[0] + ", one writer"
    text = (out / "report.md").read_text()
    assert text.startswith(f"# {labels[0]} vs {labels[1]}\n")
    header, rows = markdown_tables(text)[0]
    assert header == ["round", "runs", *labels, "difference"]
    assert len(rows) == 1  # one round: the same load on both
    for label, cell in zip(labels, rows[0][2:4], strict=True):
        result = result_of(bundles[labels.index(label)])
        assert number(cell) == (result["ceiling_rps"] or result["levels"][0]["offered_rps"])
    assert [h for h in re.findall(r"^### (.+)$", text, re.MULTILINE) if "quick" in h] == [
        f"{label}: {rows[0][0]}" for label in labels
    ]
    page = Page((out / "report.html").read_text())
    assert page.plots == ["throughput", "latency", "failures", "cpu", "operations", "seconds"]
    assert {point["data-series"] for point in page.points if point["data-key"] == "p95_ms"} == set(labels)
    with (out / "levels.csv").open(newline="") as stream:
        engines = [row["engine"] for row in csv.DictReader(stream)]
    assert engines == [
        label for label, bundle in zip(labels, bundles, strict=True) for _ in result_of(bundle)["levels"]
    ]


# -- headless Chromium ----------------------------------------------------------------------------------


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def render_in_chromium(page: Path, tmp_path: Path) -> Path:
    """Render a report page in headless Chromium; fail on any console message. Returns the screenshot."""
    browser = chromium("report.html was not rendered")
    screenshot = tmp_path / "report.png"
    done = subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
            f"--screenshot={screenshot}",
            "--window-size=1280,2000",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # The page has no script: any console message at all is an error (an SVG attribute Chromium
    # could not parse is logged as "INFO:CONSOLE... Error: <circle> attribute cx ...").
    console = [line for line in done.stderr.splitlines() if re.search(r"CONSOLE|Uncaught", line)]
    assert console == []
    assert png_size(screenshot) == (1280, 2000)
    # A blank page compresses to a few kB; the plots, tables and text make it far larger.
    assert screenshot.stat().st_size > 50_000
    return screenshot


def test_headless_chromium_renders_the_page_without_errors(bundles, tmp_path):
    render_in_chromium(bundles[0] / "report.html", tmp_path)


# -- the closed model: a users round and a spike, from real runs -----------------------------------------


@pytest.fixture(scope="session")
def closed_bundles(tmp_path_factory) -> dict[str, Path]:
    """Two bundles from real closed-model runs on SQLite: users 10, 20, 40, and a spike 10 -> 60 -> 10."""
    plans = {
        "users": ("users-read", 0.05, UserPlan.levels((10, 20, 40), ramp=0.5, hold=1.5)),
        "spike": ("spike", 0.2, UserPlan.spike(base=10, peak=60, hold=2.0, ramp=0.5)),
    }

    def make(folder: Path) -> None:
        for name, (preset, writes, plan) in plans.items():
            root = folder / name
            root.mkdir()
            config = RunConfig(
                db_url=f"sqlite:///{root}/shop.db",
                preset=preset,
                plan=plan,
                write_share=writes,
                sizes={"products": 2000, "orders": 5000},
                workers=1,
                pool_size=8,
                out_dir=root / "out",
            )
            run_round(config)  # the runner writes the bundle, reports included

    folder = made_once(tmp_path_factory, "report_closed_bundles", make)
    return {name: folder / name / "out" for name in plans}


CLOSED_FIGURES = {
    "level": lambda level: level["index"] + 1,
    "users": lambda level: level["users"],
    "could send req/s": lambda level: level["offered_rps"],
    **{key: figure for key, figure in LEVEL_FIGURES.items() if key not in ("level", "offered req/s")},
}


RATE_COLUMNS = ("users", "could send req/s", "achieved req/s", "dropped")


def close_rate(shown: str, value: float) -> bool:
    """A rate as the report prints it: whole requests per second, whatever its size."""
    return abs(number(shown) - value) <= 0.5 + 1e-9


def check_closed_level_table(header: list[str], rows: list[list[str]], result: dict[str, Any]) -> None:
    assert "offered req/s" not in header
    assert len(rows) == len(result["levels"])
    for row, level in zip(rows, result["levels"], strict=True):
        cells = dict(zip(header, row, strict=True))
        for column, figure in CLOSED_FIGURES.items():
            matches = close_rate if column in RATE_COLUMNS else close
            assert matches(cells[column], figure(level)), (column, cells[column], figure(level))
        assert cells["result"].rstrip("*") == ("pass" if level["passed"] else "FAIL")


def test_closed_results_are_closed_and_validate(closed_bundles):
    documented = set(re.findall(r"^\| `([^`]+)` \|", DOC.read_text(), re.MULTILINE))
    for bundle in closed_bundles.values():
        result = result_of(bundle)
        assert result["model"] == "closed" and result["config"]["ladder"] is None
        assert problem(result, RESULT_SCHEMA) is None
        assert sorted(set(result) - documented) == []
        assert sorted({f"config.{key}" for key in result["config"]} - documented) == []
        assert sorted({f"levels[].{key}" for key in result["levels"][0]} - documented) == []
        for name in ("result.json", "levels.csv", "timeseries.csv", "report.md", "report.html"):
            assert (bundle / name).is_file(), name


def test_a_users_round_renders_in_users_with_result_jsons_figures(closed_bundles):
    result = result_of(closed_bundles["users"])
    label = engine_label(result)
    text = (closed_bundles["users"] / "report.md").read_text()
    assert re.findall(r"^## (.+)$", text, re.MULTILINE) == [
        "Result",
        "Setup",
        "Levels",
        "What this does not show",
    ]
    assert f"_users-read: 5 % writes, 10 to 40 users ({result['started_at'][:10]})_" in text
    tables = markdown_tables(text)
    header, rows = tables[0]
    assert header == ["round", "runs", label]
    assert [row[0] for row in rows] == [
        "users-read: 5 % writes, 10 to 40 users",
        "users-read: 5 % writes, 10 to 40 users, peak",
    ]
    ceiling, users = result["ceiling_rps"], result["ceiling_users"]
    if ceiling is None:
        assert rows[0][2] == "< 10 users"
        assert text.startswith(f"# {label}: no level held\n")
    else:
        held, figure = rows[0][2].split(": ")
        assert number(held.removesuffix(" users")) == users
        assert close_rate(figure, ceiling)
        assert text.startswith(f"# {label}: held {users:,} users, {ceiling:,.0f} req/s")
    assert close_rate(rows[1][2], result["peak_rps"])
    levels = [(h, r) for h, r in tables if h[0] == "level" and h[1] != "operation"]
    assert len(levels) == 1
    check_closed_level_table(*levels[0], result)
    assert "| think time | 50 to 150 ms between an answer and the user's next request, uniform;" in text
    assert "**Think time limits the rate.**" in text


def test_a_spike_renders_its_phases_and_recovery_from_result_json(closed_bundles):
    result = result_of(closed_bundles["spike"])
    label = engine_label(result)
    text = (closed_bundles["spike"] / "report.md").read_text()
    tables = markdown_tables(text)
    assert tables[0][0] == ["round", "runs", label]
    rows = tables[0][1]
    assert rows[0][0] == "spike: 20 % writes, 10 → 60 → 10 users"
    assert close_rate(rows[0][2], result["levels"][1]["achieved_rps"])
    recovery = result["spike"]["recovery_seconds"]
    expected = "did not recover" if recovery is None else f"{recovery:g} s"
    if result["spike"].get("note"):
        expected = "not computed"
    assert rows[1] == ["spike: 20 % writes, 10 → 60 → 10 users, p95 recovery", "1", expected]
    phases = next(r for h, r in tables if h[:2] == ["run", "phase"])
    assert [row[1] for row in phases] == ["before", "spike", "after"]
    for row, level in zip(phases, result["levels"], strict=True):
        assert row[0] == label and number(row[2]) == level["users"]
        assert close_rate(row[3], level["achieved_rps"]) and close(row[4], level["p95_ms"])
    check_closed_level_table(*next((h, r) for h, r in tables if h[0] == "level"), result)
    if recovery is not None:
        assert f"p95 back within 20 % after {recovery:g} s" in text


def test_closed_html_has_its_plots_against_users_and_nothing_to_fetch(closed_bundles, tmp_path):
    for name, bundle in closed_bundles.items():
        result = result_of(bundle)
        text = (bundle / "report.html").read_text()
        page = Page(text)
        assert page.plots == ["throughput", "latency", "failures", "cpu", "operations", "seconds"]
        # a p95 panel per shop operation, and the phases second by second: p95 and answers
        assert text.count('<svg class="chart"') == 1 + 3 + 1 + 3 + 4 + 2
        assert page.references == []
        assert not re.search(r"https?://|@import|url\(|<script|<link|<img", text)
        # Every chart's x axis is users; every plotted point sits at its level's users.
        assert text.count(">users</text>") == 8 + 4
        assert "offered rate, req/s" not in text
        levels = [rows for kind, rows in page.tables if kind == "levels"]
        assert len(levels) == 1
        check_closed_level_table(levels[0][0], levels[0][1:], result)
        for key in ("achieved_rps", "p95_ms", "fail_pct"):
            drawn = [(float(p["data-x"]), float(p["data-y"])) for p in page.points if p["data-key"] == key]
            expected = [(level["users"], level[key]) for level in result["levels"]]
            if key.endswith("_ms"):
                expected = [(x, y) for x, y in expected if y > 0]
            assert [x for x, _ in drawn] == [x for x, _ in expected], key
            assert [y for _, y in drawn] == pytest.approx([y for _, y in expected], rel=1e-5), key
        # the p95 panel, the failed-% plot, each operation's p95, the p95 of each second
        assert re.findall(r'data-mark="pass" data-y="([^"]+)"', text) == ["50", "1"] + ["50"] * 4 + ["50"]
        ceilings = re.findall(r'data-mark="ceiling" data-x="([^"]+)"', text)
        if name == "spike" or result["ceiling_users"] is None:
            assert ceilings == []
        else:
            assert ceilings == [f"{result['ceiling_users']:g}"] * (1 + 3 + 1 + 3 + 4)
        render_in_chromium(bundle / "report.html", tmp_path / name)
