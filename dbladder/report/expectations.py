"""The report's "Expectations" part: every `--expect-*` of each run, its figure and whether it was met."""

from __future__ import annotations

from ..result.expectations import Check
from ..result.run import as_result
from .blocks import Block, Heading, Paragraph, TableBlock, TableColumn
from .integrity import run_name
from .runs import Results

WHAT = {
    "--expect-ceiling": "ceiling",
    "--expect-p95": "p95",
    "--expect-p99": "p99",
    "--expect-fail-pct": "failed share",
}
UNIT = {"--expect-ceiling": " req/s", "--expect-fail-pct": " %"}


def expectation_words(check: Check) -> str:
    """ "p95 of place_order at 1,000 req/s at most 80 ms", "ceiling at least 2,000 req/s"."""
    unit = UNIT.get(check.option, " ms")
    if check.option == "--expect-ceiling":
        return f"ceiling at least {check.bound:,.0f}{unit}"
    of = f" of {check.operation}" if check.operation else ""
    where = f"{check.rate:,.0f} req/s" if check.rate is not None else "the ceiling"
    return f"{WHAT.get(check.option, check.option)}{of} at {where} at most {check.bound:g}{unit}"


def expectations_section(results: Results) -> list[Block]:
    """A table of every check of every run that had expectations; empty when none had."""
    typed = [as_result(result) for result in results]
    checked = [result for result in typed if result.expectations is not None]
    if not checked:
        return []
    several = len(typed) > 1
    rows, failed = [], []
    for result in checked:
        assert result.expectations is not None
        for check in result.expectations.checks:
            unit = UNIT.get(check.option, " ms")
            found = "none" if check.found is None else f"{check.found:,.4g}{unit}"
            at = "" if check.level_rps is None else f"{check.level_rps:,.0f}"
            row = [expectation_words(check), found, at, "met" if check.met else "not met"]
            rows.append([run_name(result), *row] if several else row)
            failed.append(not check.met)
    columns = [
        TableColumn("expectation", numeric=False),
        TableColumn("found"),
        TableColumn("read at req/s"),
        TableColumn("result", numeric=False),
    ]
    unmet = sum(failed)
    summary = (
        "Every expectation was met."
        if not unmet
        else f"{unmet} of {len(failed)} expectations not met: the command exited with code 3."
    )
    return [
        Heading(3, "Expectations"),
        Paragraph(
            "What the run was asked to show (`--expect-*`). A figure at a rate is read at the level "
            "with the lowest offered rate at or above it, else at the ceiling's level; one with an "
            f"operation reads that operation's own figures. {summary}"
        ),
        TableBlock(
            [TableColumn("run", numeric=False), *columns] if several else columns,
            rows,
            failed,
            kind="expectations",
        ),
    ]
