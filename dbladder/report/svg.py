"""Line charts as inline SVG, written by hand: axes (linear or log), ticks, lines, markers, marks.

Why not a plotting library: the report needs four kinds of line chart and nothing else, and SVG
written here is small, has no dependency, prints sharply, keeps its text as text, and carries each
point's value in `data-x` / `data-y` attributes (and a hover `<title>`), which is what the tests
compare with result.json. docs/design.md ("Reports") has the comparison with matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999")
"""Okabe and Ito's colour-blind-safe colours (their yellow left out: it does not show on white)."""
MARKERS = ("circle", "square", "triangle", "diamond")
DASHES = {"solid": "", "dashed": "6 4", "dotted": "2 3", "dashdot": "7 3 2 3"}
HALO = 'paint-order="stroke" stroke="#fff" stroke-width="3" stroke-linejoin="round"'
"""Text attributes that draw a white outline under a label, so it stays readable across a line."""
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"


def _fmt(value: float) -> str:
    """An axis label: 1,000 and 0.5, never 1000.0 or 5e-01."""
    if value == 0:
        return "0"
    if abs(value) >= 1:
        return f"{value:,.0f}" if abs(value - round(value)) < 1e-9 else f"{value:,.1f}"
    return f"{value:.3g}"


def linear_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) covering [lo, hi]."""
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    first = math.floor(lo / step + 1e-9) * step
    last = math.ceil(hi / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(round((last - first) / step) + 1)]


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[float]]:
    """(labelled ticks, minor ticks) of a log axis covering [lo, hi]: whole decades, plus 2 and 5
    when the axis spans two decades or less, so a short axis still has labels to read."""
    first = math.floor(math.log10(lo) + 1e-9)
    last = math.ceil(math.log10(hi) - 1e-9)
    if last <= first:
        last = first + 1
    labelled = [10.0**k for k in range(first, last + 1)]
    minor = [m * 10.0**k for k in range(first, last) for m in range(2, 10)]
    if last - first <= 2:
        labelled += [m * 10.0**k for k in range(first, last) for m in (2, 5)]
        minor = [value for value in minor if value not in labelled]
    return sorted(labelled), minor


@dataclass(frozen=True)
class Axis:
    """One axis: its domain (after rounding to ticks), scale and label."""

    lo: float
    hi: float
    log: bool
    label: str
    ticks: tuple[float, ...]
    minor: tuple[float, ...] = ()

    @classmethod
    def covering(
        cls, values: list[float], label: str, log: bool = False, floor: float | None = 0.0, pad: float = 0.0
    ) -> Axis:
        """An axis whose ticks cover `values` (and `floor`, when given, on a linear axis); `pad` adds
        that fraction of the span past the last tick, so a mark at the top value stays off the frame."""
        if log:
            positive = [v for v in values if v > 0] or [1.0]
            ticks, minor = log_ticks(min(positive), max(positive))
            return cls(ticks[0], ticks[-1], True, label, tuple(ticks), tuple(minor))
        span = [*values, *([floor] if floor is not None else [])] or [0.0, 1.0]
        ticks = linear_ticks(min(span), max(span))
        return cls(ticks[0], ticks[-1] + pad * (ticks[-1] - ticks[0]), False, label, tuple(ticks))

    def fraction(self, value: float) -> float:
        """Where `value` lies between lo (0) and hi (1)."""
        if self.log:
            return (math.log10(value) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        return (value - self.lo) / (self.hi - self.lo)

    def shows(self, value: float | None) -> bool:
        """Whether a value can be drawn (a log axis has no place for 0)."""
        return value is not None and math.isfinite(value) and (value > 0 or not self.log)


@dataclass(frozen=True)
class Point:
    x: float
    y: float | None  # None: no figure (the line breaks here)
    hollow: bool = False  # an open marker: a failed level
    tip: str = ""


@dataclass
class Chart:
    """One chart: build it with series and marks, then `svg()`."""

    title: str
    x: Axis
    y: Axis
    width: int = 640
    height: int = 360
    left: int = 66
    right: int = 18
    top: int = 34
    bottom: int = 46
    _body: list[str] = field(default_factory=list)
    _over: list[str] = field(default_factory=list)
    _legend: list[tuple[str, str, str]] = field(default_factory=list)

    def px(self, x: float) -> float:
        return self.left + self.x.fraction(x) * (self.width - self.left - self.right)

    def py(self, y: float) -> float:
        return self.height - self.bottom - self.y.fraction(y) * (self.height - self.top - self.bottom)

    def series(
        self,
        name: str,
        points: list[Point],
        color: str,
        dash: str = "solid",
        marker: str = "circle",
        key: str = "",
    ) -> None:
        """A line through the points, a marker on each; breaks where a point has no value."""
        runs: list[list[Point]] = [[]]
        for point in points:
            if self.y.shows(point.y):
                runs[-1].append(point)
            elif runs[-1]:
                runs.append([])
        group = [f'<g class="series" data-series="{escape(name)}" data-key="{escape(key)}">']
        for run in runs:
            if len(run) > 1:
                path = " ".join(f"{self.px(p.x):.1f},{self.py(p.y):.1f}" for p in run if p.y is not None)
                group.append(
                    f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" '
                    f'stroke-dasharray="{DASHES[dash]}" stroke-linejoin="round"/>'
                )
        for point in points:
            if point.y is not None and self.y.shows(point.y):
                group.append(self._marker(point, point.y, color, marker))
        group.append("</g>")
        self._body.append("".join(group))

    def _marker(self, point: Point, value: float, color: str, shape: str) -> str:
        x, y, r = self.px(point.x), self.py(value), 4.0
        fill = "#fff" if point.hollow else color
        attributes = (
            f'fill="{fill}" stroke="{color}" stroke-width="1.6" class="point" '
            f'data-x="{point.x:g}" data-y="{value:g}" data-failed="{str(point.hollow).lower()}"'
        )
        tip = f"<title>{escape(point.tip)}</title>" if point.tip else ""
        if shape == "square":
            corner = f'x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}"'
            return f"<rect {corner} {attributes}>{tip}</rect>"
        if shape in ("triangle", "diamond"):
            d = r + 1
            corners = (
                [(x, y - d), (x + d, y + r), (x - d, y + r)]
                if shape == "triangle"
                else [(x, y - d), (x + d, y), (x, y + d), (x - d, y)]
            )
            path = "M" + " L".join(f"{cx:.1f},{cy:.1f}" for cx, cy in corners) + " Z"
            return f'<path d="{path}" {attributes}>{tip}</path>'
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {attributes}>{tip}</circle>'

    def hline(self, value: float, text: str, color: str = "#222") -> None:
        """A horizontal mark across the plot (the pass mark), labelled at the right."""
        if not self.y.shows(value) or not self.y.lo <= value <= self.y.hi:
            return
        y = self.py(value)
        x0, x1 = self.left, self.width - self.right
        self._over.append(
            f'<g class="mark" data-mark="pass" data-y="{value:g}"><line x1="{x0}" y1="{y:.1f}" x2="{x1}" '
            f'y2="{y:.1f}" stroke="{color}" stroke-width="1.4" stroke-dasharray="8 3 2 3"/>'
            f'<text x="{x0 + 5}" y="{y - 5:.1f}" fill="{color}" font-size="11" {HALO}>'
            f"{escape(text)}</text></g>"
        )

    def vline(self, value: float, text: str, color: str, row: int = 0, mark: str = "ceiling") -> None:
        """A vertical mark (a ceiling; `mark` names another kind, such as a level's start), labelled
        at the top; `row` staggers labels that would collide."""
        if not self.x.lo <= value <= self.x.hi:
            return
        x = self.px(value)
        y_top = self.top + 11 + 12 * row
        anchor = "end" if x > self.width - self.right - 60 else "start"
        shift = -4 if anchor == "end" else 4
        self._over.append(
            f'<g class="mark" data-mark="{mark}" data-x="{value:g}"><line x1="{x:.1f}" y1="{self.top}" '
            f'x2="{x:.1f}" y2="{self.height - self.bottom}" stroke="{color}" stroke-width="1.2" '
            f'stroke-dasharray="2 3"/><text x="{x + shift:.1f}" y="{y_top}" text-anchor="{anchor}" '
            f'fill="{color}" font-size="11" {HALO}>{escape(text)}</text></g>'
        )

    def diagonal(self, text: str, slope: float = 1.0) -> None:
        """The line y = slope * x (achieved equals offered; or what users could send), clipped to the plot."""
        lo = max(self.x.lo, self.y.lo / slope)
        hi = min(self.x.hi, self.y.hi / slope)
        if hi <= lo:
            return
        label_at = lo + 0.12 * (hi - lo)  # low on the line, where the data rarely is yet
        self._body.insert(
            0,
            f'<g class="mark" data-mark="diagonal"><line x1="{self.px(lo):.1f}" '
            f'y1="{self.py(slope * lo):.1f}" x2="{self.px(hi):.1f}" y2="{self.py(slope * hi):.1f}" '
            f'stroke="#888" stroke-width="1" '
            f'stroke-dasharray="4 4"/><text x="{self.px(label_at) + 6:.1f}" '
            f'y="{self.py(slope * label_at) + 4:.1f}" '
            f'fill="#666" font-size="11" {HALO}>{escape(text)}</text></g>',
        )

    def note(self, text: str) -> None:
        """A message in the middle of the plot (e.g. "not measured in this run")."""
        x = (self.left + self.width - self.right) / 2
        y = (self.top + self.height - self.bottom) / 2
        self._over.append(
            f'<text class="note" x="{x:.1f}" y="{y:.1f}" text-anchor="middle" fill="#444" '
            f'font-size="13" font-style="italic" {HALO}>{escape(text)}</text>'
        )

    def legend(self, entries: list[tuple[str, str, str]]) -> None:
        """A key in the plot's top-left corner: (text, colour, dash) per line style."""
        self._legend = entries

    def _axes(self) -> list[str]:
        x0, x1 = self.left, self.width - self.right
        y0, y1 = self.height - self.bottom, self.top
        parts = [f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="#fff" stroke="#bbb"/>']
        for value in self.y.minor:
            y = self.py(value)
            parts.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#f0f0f0"/>')
        for value in self.y.ticks:
            y = self.py(value)
            parts.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#e2e2e2"/>')
            parts.append(
                f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="#333">'
                f"{_fmt(value)}</text>"
            )
        for value in self.x.ticks:
            x = self.px(value)
            parts.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + 4}" stroke="#888"/>')
            parts.append(
                f'<text x="{x:.1f}" y="{y0 + 17}" text-anchor="middle" font-size="11" fill="#333">'
                f"{_fmt(value)}</text>"
            )
        parts.append(
            f'<text x="{(x0 + x1) / 2:.1f}" y="{self.height - 8}" text-anchor="middle" font-size="12" '
            f'fill="#222">{escape(self.x.label)}</text>'
        )
        parts.append(
            f'<text transform="translate(14 {(y0 + y1) / 2:.1f}) rotate(-90)" text-anchor="middle" '
            f'font-size="12" fill="#222">{escape(self.y.label)}</text>'
        )
        parts.append(
            f'<text x="{x0}" y="{self.top - 12}" font-size="13" font-weight="600" fill="#111">'
            f"{escape(self.title)}</text>"
        )
        return parts

    def _key(self) -> list[str]:
        parts = []
        for row, (text, color, dash) in enumerate(self._legend):
            y = self.top + 14 + 15 * row
            x = self.left + 10
            parts.append(
                f'<line x1="{x}" y1="{y - 4}" x2="{x + 26}" y2="{y - 4}" stroke="{color}" stroke-width="2" '
                f'stroke-dasharray="{DASHES[dash]}"/><text x="{x + 32}" y="{y}" font-size="11" '
                f'fill="#222">{escape(text)}</text>'
            )
        return parts

    def svg(self) -> str:
        """The chart as an `<svg>` element that scales to its container's width."""
        return (
            f'<svg class="chart" viewBox="0 0 {self.width} {self.height}" role="img" '
            f'aria-label="{escape(self.title)}" font-family="{escape(FONT)}">'
            f"<title>{escape(self.title)}</title>"
            + "".join([*self._axes(), *self._body, *self._over, *self._key()])
            + "</svg>"
        )
