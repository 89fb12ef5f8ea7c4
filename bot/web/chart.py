"""A small bar chart of camp win rates with their 95 % intervals, as inline SVG for the
community page: the geometry here, the elements in the template (bot/web/templates/
community.html). Numbers and our own words only; every attribute is a presentation
attribute (no `style`), so the page's Content Security Policy needs nothing more."""

from __future__ import annotations

from dataclasses import dataclass, field

WIDTH = 340
LEFT = 96  # the camp names' column
RIGHT = 12
ROW = 16  # one bar's height
GAP = 10  # between camps
TOP = 18  # the axis' labels
REAL, SIM = "#b4442b", "#8a9bb0"  # the real games' bars, the simulator's


@dataclass(frozen=True)
class Bar:
    label: str
    rate: float
    low: float
    high: float
    sim: bool = False


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    fill: str


@dataclass(frozen=True)
class Stroke:
    x1: float
    y1: float
    x2: float
    y2: float
    color: str


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"
    size: int = 11


@dataclass
class Chart:
    width: int
    height: int
    title: str
    rects: list[Rect] = field(default_factory=list)
    strokes: list[Stroke] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)


def _x(rate: float) -> float:
    return round(LEFT + max(0.0, min(1.0, rate)) * (WIDTH - LEFT - RIGHT), 1)


def chart(title: str, camps: list[tuple[str, list[Bar]]], legend: tuple[str, str]) -> Chart:
    """One group of bars per camp (the real games', then the simulator's), each with its
    interval as a whisker; an axis at 0, 50 and 100 %, and a legend."""
    rows = sum(len(bars) for _, bars in camps)
    height = TOP + rows * ROW + len(camps) * GAP + 22
    out = Chart(WIDTH, height, title)
    for pct in (0.0, 0.5, 1.0):
        x = _x(pct)
        out.strokes.append(Stroke(x, TOP - 4, x, height - 22, "#dddddd"))
        out.labels.append(Label(x, TOP - 7, f"{pct:.0%}", "middle", 10))
    y = float(TOP)
    for name, bars in camps:
        out.labels.append(Label(LEFT - 6, y + ROW - 4, name, "end"))
        for bar in bars:
            color = SIM if bar.sim else REAL
            out.rects.append(Rect(LEFT, y + 2, round(_x(bar.rate) - LEFT, 1), ROW - 4, color))
            mid = y + ROW / 2
            lo, hi = _x(bar.low), _x(bar.high)
            out.strokes += [Stroke(lo, mid, hi, mid, "#333333"),
                            Stroke(lo, mid - 4, lo, mid + 4, "#333333"),
                            Stroke(hi, mid - 4, hi, mid + 4, "#333333")]
            y += ROW
        y += GAP
    legend_y = height - 8
    out.rects += [Rect(LEFT, legend_y - 9, 10, 10, REAL), Rect(LEFT + 70, legend_y - 9, 10, 10,
                                                                  SIM)]
    out.labels += [Label(LEFT + 14, legend_y, legend[0]), Label(LEFT + 84, legend_y, legend[1])]
    return out
