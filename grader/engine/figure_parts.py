"""The parts every misconception figure is made of: the figure and its bar charts, and the
small computations their captions quote. No Django imports."""

# ruff: noqa: RUF003 - the figures write × and − as math

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# The bar chart's geometry (an inline SVG the template draws from these numbers).
BAR_WIDTH = 22


BAR_GAP = 6


BAR_HEIGHT = 60


@dataclass(frozen=True)
class Bar:
    x: int
    y: float
    height: float
    label: str  # the weight, for the bar's <title>


@dataclass(frozen=True)
class BarChart:
    name: str
    bars: tuple[Bar, ...]
    width: int = 0
    height: int = BAR_HEIGHT


@dataclass(frozen=True)
class Figure:
    caption: str
    rows: tuple[tuple[str, str], ...]  # (what, computed value) pairs, shown as a table
    charts: tuple[BarChart, ...] = field(default_factory=tuple)
    links: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (text, internal URL)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def bar_chart(name: str, weights: np.ndarray) -> BarChart:
    bars = tuple(
        Bar(
            x=i * (BAR_WIDTH + BAR_GAP),
            y=round(BAR_HEIGHT * (1 - float(w)), 1),
            height=round(BAR_HEIGHT * float(w), 1),
            label=pct(float(w)),
        )
        for i, w in enumerate(weights)
    )
    return BarChart(name, bars, width=len(bars) * (BAR_WIDTH + BAR_GAP) - BAR_GAP)


# The small fixed example several figures use: one query's scores against 3 keys (the worked
# example's row 1, already divided by √4 = 2), and two such rows.
ROW = np.array([1.0, 0.0, 0.5])
GRID = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])


def numbers(a: np.ndarray, digits: int = 3) -> str:
    return ", ".join(f"{x:.{digits}f}" for x in np.ravel(a)) if a.size else ""
