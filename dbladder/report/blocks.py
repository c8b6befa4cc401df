"""The report as blocks: headings, paragraphs, tables, settings files and plots.

`document.py` decides what the report says and builds these; `markdown.py` and `html.py` each
render them, so the two formats can never disagree. Paragraph and bullet text may use two inline
marks, `**bold**` and `` `code` ``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .runs import Round


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class TableColumn:
    header: str
    numeric: bool = True


@dataclass(frozen=True)
class TableBlock:
    columns: list[TableColumn]
    rows: list[list[str]]
    failed: list[bool] = field(default_factory=list)  # per row: highlight it (a failed level)
    kind: str = ""  # "levels", "operations", "result" or "facts": lets a renderer (and a test) find it


@dataclass(frozen=True)
class Code:
    caption: str
    text: str


@dataclass(frozen=True)
class Plots:
    """Where the plots of one round go (HTML draws them; Markdown points to report.html)."""

    round: Round


Block = Heading | Paragraph | Bullets | TableBlock | Code | Plots


@dataclass(frozen=True)
class Report:
    title: str
    subtitle: str
    blocks: list[Block]
    rounds: list[Round]
