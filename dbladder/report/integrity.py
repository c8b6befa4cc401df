"""What survived: the integrity check of each run and the faults it injected, as lines and blocks.

A result's `integrity` section says whether every write the database acknowledged was still there
after the run, and `faults` what was killed or restarted, when, and how long until answers came
back; the level a fault struck keeps its failures by cause. The terminal, the Markdown and the
HTML report all read them from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .blocks import Block, Column, Heading, Paragraph, Table
from .runs import engine_label


def integrity_line(section: dict[str, Any]) -> str:
    """The check in one line: "integrity: 1,234 acknowledged, 1,234 present, 0 lost, 0 corrupted,
    0 invariant violations (checked in 0.42 s)"."""
    if not section.get("checked"):
        return f"integrity: not checked ({section.get('what', '')})"
    present = section.get("present")
    return (
        f"integrity: {section['acknowledged']:,} acknowledged, "
        f"{'?' if present is None else format(present, ',')} present, "
        f"{section['lost']:,} lost, {section['corrupted']:,} corrupted, "
        f"{len(section['violations'])} invariant violation(s) (checked in {section['seconds']:.2f} s)"
    )


def fault_line(record: dict[str, Any]) -> str:
    """One fault in one line: what, when, what was done, and when answers came back."""
    if record["state"] == "not reached":
        return f"{record['fault']}: not reached (the run ended before it)"
    where = f"{record['fault']} at {record.get('at_s', 0):.1f} s"
    if record["state"] == "failed":
        return f"{where}: could not be caused: {record.get('error', '')}"
    back = record.get("back_after_s")
    answers = "answers did not come back" if back is None else f"answers came back after {back:.2f} s"
    return f"{where}: {record.get('detail', '')}; {answers}"


def integrity_lines(result: dict[str, Any]) -> list[str]:
    """What the terminal prints after a run: the faults, the check, and what went missing."""
    lines = [f"fault    {fault_line(record)}" for record in result.get("faults") or []]
    section = result.get("integrity")
    if section:
        lines.append(integrity_line(section))
        if section.get("lost_ids"):
            lines.append(f"  lost: orders {section['lost_ids']}")
        if section.get("corrupted_ids"):
            lines.append(f"  corrupted: orders {section['corrupted_ids']}")
        lines += [f"  {violation}" for violation in section.get("violations", [])]
        if section.get("durability") and (section.get("lost") or result.get("faults")):
            lines.append(f"  {section['durability']}")
    return lines


def integrity_section(results: Sequence[dict[str, Any]]) -> list[Block]:
    """The report's "Nothing lost?" part of the result section; empty when no result checked anything
    or had faults."""
    checked = [result for result in results if result.get("integrity")]
    faulted = [result for result in results if result.get("faults")]
    if not checked and not faulted:
        return []
    blocks: list[Block] = [Heading(3, "Nothing lost?")]
    if checked:
        blocks.append(
            Paragraph(
                "After a run with writes, dbladder looks up every write the database acknowledged "
                "(answered 2xx) and checks the workload's invariants: "
                + "; ".join(dict.fromkeys(str(r["integrity"].get("what", "")) for r in checked))
                + "."
            )
        )
        rows, failed = [], []
        for result in checked:
            section = result["integrity"]
            present = section.get("present")
            rows.append(
                [
                    _name(result),
                    f"{section['acknowledged']:,}",
                    "?" if present is None else f"{present:,}",
                    f"{section['lost']:,}",
                    f"{section['corrupted']:,}",
                    f"{len(section['violations']):,}",
                    f"{section.get('unacknowledged_present', 0):,}",
                    f"{section['seconds']:.2f}",
                ]
            )
            failed.append(not section.get("passed", False))
        blocks.append(
            Table(
                [
                    Column("run", numeric=False),
                    Column("acknowledged"),
                    Column("present"),
                    Column("lost"),
                    Column("corrupted"),
                    Column("invariant violations"),
                    Column("kept, not acknowledged"),
                    Column("check, s"),
                ],
                rows,
                failed,
                kind="integrity",
            )
        )
        for result in checked:
            section = result["integrity"]
            for violation in section.get("violations", []):
                blocks.append(Paragraph(f"**{_name(result)}:** {violation}"))
        notes = dict.fromkeys(
            str(r["integrity"]["durability"]) for r in checked if r["integrity"].get("durability")
        )
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
            levels = {level["index"]: level for level in result.get("levels", [])}
            for record in result["faults"]:
                level = levels.get(record["level"], {})
                failures = ", ".join(
                    f"{count:,} {cause}" for cause, count in level.get("failures", {}).items()
                )
                back = record.get("back_after_s")
                rows.append(
                    [
                        _name(result),
                        record["fault"],
                        f"{record['level'] + 1}",
                        "" if "at_s" not in record else f"{record['at_s']:.1f}",
                        failures or ("none" if level else ""),
                        "" if back is None else f"{back:.2f}",
                        record.get("detail") or record.get("error") or record["state"],
                    ]
                )
        blocks.append(
            Table(
                [
                    Column("run", numeric=False),
                    Column("fault", numeric=False),
                    Column("level"),
                    Column("at, s"),
                    Column("failures in the level", numeric=False),
                    Column("answers back after, s"),
                    Column("what was done", numeric=False),
                ],
                rows,
                kind="faults",
            )
        )
    return blocks


def _name(result: dict[str, Any]) -> str:
    label = engine_label(result)
    return f"{label}, run {result['run']}" if result.get("run") else label
