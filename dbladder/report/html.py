"""report.html: the report's blocks and plots as one self-contained page.

Everything is inline (CSS and SVG, no script, no font, no image file): the page opens offline and
prints as it shows, with a print stylesheet that keeps plots and tables whole on a page.
"""

from __future__ import annotations

import re
from html import escape

from .blocks import Block, Bullets, Code, Heading, Paragraph, Plots, Report, TableBlock
from .plots import PlotFigure, Series, figures_for, series_of
from .seconds_plot import over_time
from .svg import DASHES

CSS = """
:root { color-scheme: light; }
body { margin: 0; background: #f4f4f2; color: #1b1b1b;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 20px 32px 40px; background: #fff; }
h1 { font-size: 1.6rem; margin: 0.4rem 0 0.1rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 0.6rem; padding-bottom: 0.2rem; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 0.4rem; }
p.subtitle { margin: 0 0 1rem; color: #555; }
p, li { max-width: 60rem; }
code { font: 0.9em ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; background: #f2f2f2;
  padding: 0 0.2em; }
.table-wrap { overflow-x: auto; margin: 0.4rem 0 0.6rem; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
th { background: #f3f3f1; text-align: left; font-weight: 600; vertical-align: bottom; }
th.num, td.num { text-align: right; }
td.num { white-space: nowrap; }
/* A level table with every CPU column is wide: its headings wrap instead of the page scrolling. */
table.levels { font-size: 12.5px; }
table.levels th { max-width: 5.5em; }
table.levels th, table.levels td { padding: 3px 6px; }
table.facts td:first-child { color: #555; white-space: nowrap; }
table.result td { font-size: 14px; }
tr.failed td { background: #fdeceb; }
figure.code { margin: 0.5rem 0 1rem; }
figure.code figcaption { font-size: 13px; color: #555; margin-bottom: 0.2rem; }
pre { margin: 0; padding: 10px 14px; background: #f7f7f5; border-left: 3px solid #c9c9c4;
  font: 13px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; overflow-x: auto; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 13px; margin: 0.6rem 0 0.4rem; }
.legend span { display: inline-flex; align-items: center; gap: 5px; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 14px 22px;
  grid-auto-flow: dense; }
figure.plot { margin: 0; }
figure.plot.wide { grid-column: 1 / -1; }
.panels { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 8px; }
svg.chart { display: block; width: 100%; height: auto; }
figure.plot figcaption { font-size: 12.5px; color: #444; margin-top: 2px; }
@media (max-width: 700px) { main { padding: 12px; } .figures { grid-template-columns: 1fr; }
  .panels { grid-template-columns: 1fr; } }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { background: #fff; font-size: 10pt; }
  main { max-width: none; padding: 0; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .figures { grid-template-columns: 1fr; }
  figure.plot:not(.wide) svg.chart { max-width: 150mm; }
  /* Three panels across A4 would print their labels at 4 pt; two across keep them near 7 pt. */
  .panels { grid-template-columns: 1fr 1fr; }
  figure, table, pre, .legend { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  .table-wrap { overflow: visible; }
  table { font-size: 8pt; }
  th, td { padding: 2px 5px; }
}
"""


def _inline(text: str) -> str:
    """Escape, then turn the blocks' two inline marks into HTML."""
    html = escape(text)
    html = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", html)


def table(block: TableBlock) -> str:
    """A table with numeric columns right-aligned and failed levels tinted."""
    head = "".join(
        f'<th class="{"num" if column.numeric else "text"}" scope="col">{escape(column.header)}</th>'
        for column in block.columns
    )
    rows = []
    for index, row in enumerate(block.rows):
        failed = index < len(block.failed) and block.failed[index]
        cells = "".join(
            f'<td class="{"num" if column.numeric else "text"}">{escape(value)}</td>'
            for column, value in zip(block.columns, row, strict=True)
        )
        rows.append(f'<tr class="failed">{cells}</tr>' if failed else f"<tr>{cells}</tr>")
    thead = f"<thead><tr>{head}</tr></thead>" if any(column.header for column in block.columns) else ""
    return (
        f'<div class="table-wrap"><table class="{escape(block.kind)}">{thead}'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _swatch(item: Series) -> str:
    marker = {
        "circle": '<circle cx="15" cy="6" r="4"',
        "square": '<rect x="11" y="2" width="8" height="8"',
        "triangle": '<path d="M15,1 L20,10 L10,10 Z"',
        "diamond": '<path d="M15,1 L20,6 L15,11 L10,6 Z"',
    }[item.marker]
    closing = {"circle": "circle", "square": "rect"}.get(item.marker, "path")
    return (
        f'<svg width="30" height="12" viewBox="0 0 30 12" aria-hidden="true"><line x1="0" y1="6" x2="30" '
        f'y2="6" stroke="{item.color}" stroke-width="2" stroke-dasharray="{DASHES[item.dash]}"/>'
        f'{marker} fill="{item.color}" stroke="{item.color}"></{closing}></svg>'
    )


def _legend(all_series: list[Series], ceilings: bool = True) -> str:
    entries = [f"<span>{_swatch(item)}{escape(item.run.name)}</span>" for item in all_series]
    entries.append("<span>open marker: a failed level</span>")
    if ceilings:  # a spike's plots mark no ceiling
        entries.append("<span>dotted vertical line: a run's ceiling</span>")
    return f'<div class="legend">{"".join(entries)}</div>'


def _figure(figure: PlotFigure) -> str:
    body = "".join(figure.svgs)
    if len(figure.svgs) > 1:
        body = f'<div class="panels">{body}</div>'
    wide = " wide" if figure.wide else ""
    return (
        f'<figure class="plot{wide}" data-plot="{figure.key}">{body}'
        f"<figcaption>{escape(figure.caption)}</figcaption></figure>"
    )


def _plots(block: Plots) -> str:
    all_series = series_of(block.round)
    seconds = over_time(block.round)  # every level second by second, when the levels have them
    shown = [*figures_for(block.round), *([seconds] if seconds else [])]
    figures = "".join(_figure(figure) for figure in shown)
    legend = _legend(all_series, ceilings=not block.round.spike)
    return f'<section class="plots">{legend}<div class="figures">{figures}</div></section>'


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"<h{block.level}>{escape(block.text)}</h{block.level}>"
    if isinstance(block, Paragraph):
        return f"<p>{_inline(block.text)}</p>"
    if isinstance(block, Bullets):
        return "<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in block.items) + "</ul>"
    if isinstance(block, TableBlock):
        return table(block)
    if isinstance(block, Code):
        return (
            f'<figure class="code"><figcaption>{escape(block.caption)}</figcaption>'
            f"<pre>{escape(block.text)}</pre></figure>"
        )
    if isinstance(block, Plots):
        return _plots(block)
    raise TypeError(f"no HTML for {type(block).__name__}")


def render(report: Report) -> str:
    """The whole report as one HTML page."""
    body = "\n".join(_block(block) for block in report.blocks)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(report.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        f'<header><h1>{escape(report.title)}</h1><p class="subtitle">{escape(report.subtitle)}</p></header>\n'
        f"{body}\n</main>\n</body>\n</html>\n"
    )
