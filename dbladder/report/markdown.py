"""report.md: the report's blocks as GitHub-flavoured Markdown, ready to paste into a post."""

from __future__ import annotations

from .blocks import Block, Bullets, Code, Heading, Paragraph, Plots, Report, TableBlock


def _cell(text: str) -> str:
    # A pipe inside a cell would end it.
    return text.replace("|", "\\|")


def table(block: TableBlock) -> str:
    """A pipe table; numeric columns right-aligned."""
    headers = [column.header or " " for column in block.columns]
    rule = ["---:" if column.numeric else "---" for column in block.columns]
    lines = [
        "| " + " | ".join(_cell(h) for h in headers) + " |",
        "| " + " | ".join(rule) + " |",
    ]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in block.rows]
    return "\n".join(lines)


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return "#" * block.level + " " + block.text
    if isinstance(block, Paragraph):
        return block.text
    if isinstance(block, Bullets):
        return "\n".join(f"- {item}" for item in block.items)
    if isinstance(block, TableBlock):
        return table(block)
    if isinstance(block, Code):
        return f"{block.caption}:\n\n```\n{block.text}\n```"
    if isinstance(block, Plots):
        return "_Plots of this round (rate, latency, failures, CPU against the level): report.html._"
    raise TypeError(f"no Markdown for {type(block).__name__}")


def render(report: Report) -> str:
    """The whole report as Markdown text."""
    parts = [f"# {report.title}", f"_{report.subtitle}_", *(_block(block) for block in report.blocks)]
    return "\n\n".join(parts) + "\n"
