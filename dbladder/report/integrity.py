"""What survived: the integrity check of each run and the faults it injected, as lines and blocks.

A result's `integrity` section says whether every write the database acknowledged was still there
after the run, and `faults` what was killed or restarted, when, and how long until answers came
back; the level a fault struck keeps its failures by cause. The terminal, the Markdown and the
HTML report all read them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..result.context import FaultRecord
from ..result.run import Integrity, RunResult, as_result
from .blocks import Block, Heading, Paragraph, TableBlock, TableColumn
from .runs import Results, engine_label


def integrity_line(section: Integrity | Mapping[str, Any]) -> str:
    """The check in one line: "integrity: 1,234 acknowledged, 1,234 present, 0 lost, 0 corrupted,
    0 invariant violations (checked in 0.42 s)", with "on app agent app-1 (10.0.0.4)" in a
    cluster run, where the check ran on the machine that holds the data."""
    section = section if isinstance(section, Integrity) else Integrity.from_json(section)
    if not section.checked:
        return f"integrity: not checked ({section.what or ''})"
    present = section.present
    # An answer that did not say what it wrote cannot be looked up: without this, 37 such answers
    # read "37 acknowledged, 0 present, 0 lost", as if all were there.
    unread = (
        f"{section.unreadable:,} not looked up (their answers did not say what was written), "
        if section.unreadable
        else ""
    )
    return (
        f"integrity: {section.acknowledged:,} acknowledged, "
        f"{'?' if present is None else format(present, ',')} present, "
        f"{section.lost:,} lost, {unread}{section.corrupted:,} corrupted, "
        f"{len(section.violations)} invariant violation(s) (checked in {section.seconds:.2f} s"
        f"{f' on {section.checked_on}' if section.checked_on else ''})"
    )


def fault_line(record: FaultRecord | Mapping[str, Any]) -> str:
    """One fault in one line: what, when, what was done, and when answers came back."""
    record = record if isinstance(record, FaultRecord) else FaultRecord.from_json(record)
    if record.state == "not reached":
        return f"{record.fault}: not reached (the run ended before it)"
    where = f"{record.fault} at {record.at_s or 0:.1f} s"
    if record.state == "failed":
        return f"{where}: could not be caused: {record.error or ''}"
    back = record.back_after_s
    answers = "answers did not come back" if back is None else f"answers came back after {back:.2f} s"
    return f"{where}: {record.detail or ''}; {answers}"


def integrity_lines(result: RunResult | Mapping[str, Any]) -> list[str]:
    """What the terminal prints after a run: the faults, the check, and what went missing."""
    result = as_result(result)
    lines = [f"fault    {fault_line(record)}" for record in result.faults or ()]
    section = result.integrity
    if section:
        lines.append(integrity_line(section))
        if section.lost_ids:
            lines.append(f"  lost: orders {section.lost_ids}")
        if section.corrupted_ids:
            lines.append(f"  corrupted: orders {section.corrupted_ids}")
        lines += [f"  {violation}" for violation in section.violations]
        if section.durability and (section.lost or result.faults):
            lines.append(f"  {section.durability}")
    return lines


def integrity_section(results: Results) -> list[Block]:
    """The report's "Nothing lost?" part of the result section; empty when no result checked anything
    or had faults."""
    typed = [as_result(result) for result in results]
    checked = [(result, result.integrity) for result in typed if result.integrity]
    faulted = [result for result in typed if result.faults]
    if not checked and not faulted:
        return []
    blocks: list[Block] = [Heading(3, "Nothing lost?")]
    if checked:
        blocks.append(
            Paragraph(
                "After a run with writes, dbladder looks up every write the database acknowledged "
                "(answered 2xx) and checks the workload's invariants: "
                + "; ".join(dict.fromkeys(str(section.what or "") for _, section in checked))
                + "."
            )
        )
        rows, failed = [], []
        for result, section in checked:
            present = section.present
            rows.append(
                [
                    run_name(result),
                    f"{section.acknowledged:,}",
                    "?" if present is None else f"{present:,}",
                    f"{section.lost:,}",
                    f"{section.corrupted:,}",
                    f"{len(section.violations):,}",
                    f"{section.unacknowledged_present or 0:,}",
                    f"{section.seconds:.2f}",
                ]
            )
            failed.append(not section.passed)
        blocks.append(
            TableBlock(
                [
                    TableColumn("run", numeric=False),
                    TableColumn("acknowledged"),
                    TableColumn("present"),
                    TableColumn("lost"),
                    TableColumn("corrupted"),
                    TableColumn("invariant violations"),
                    TableColumn("kept, not acknowledged"),
                    TableColumn("check, s"),
                ],
                rows,
                failed,
                kind="integrity",
            )
        )
        for result, section in checked:
            for violation in section.violations:
                blocks.append(Paragraph(f"**{run_name(result)}:** {violation}"))
        notes = dict.fromkeys(str(section.durability) for _, section in checked if section.durability)
        for note in notes:
            blocks.append(Paragraph(note))
    if faulted:
        blocks.append(
            Paragraph(
                "Faults injected on purpose; the level they struck shows the outage: its failures by "
                "cause, and the seconds until a real request was answered again."
            )
        )
        rows = []
        for result in faulted:
            levels = {level.index: level for level in result.levels}
            for record in result.faults or ():
                level = levels.get(record.level)
                failures = ", ".join(
                    f"{count:,} {cause}" for cause, count in (level.failures if level else {}).items()
                )
                back = record.back_after_s
                rows.append(
                    [
                        run_name(result),
                        record.fault,
                        f"{record.level + 1}",
                        "" if record.at_s is None else f"{record.at_s:.1f}",
                        failures or ("none" if level else ""),
                        "" if back is None else f"{back:.2f}",
                        record.detail or record.error or record.state,
                    ]
                )
        blocks.append(
            TableBlock(
                [
                    TableColumn("run", numeric=False),
                    TableColumn("fault", numeric=False),
                    TableColumn("level"),
                    TableColumn("at, s"),
                    TableColumn("failures in the level", numeric=False),
                    TableColumn("answers back after, s"),
                    TableColumn("what was done", numeric=False),
                ],
                rows,
                kind="faults",
            )
        )
    return blocks


def run_name(result: RunResult) -> str:
    """A run as the report's tables name it: its engine label, and its number in a comparison."""
    label = engine_label(result)
    return f"{label}, run {result.run}" if result.run else label
