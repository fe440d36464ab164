"""The loss curves as inline SVG: plain shapes computed here, drawn by any browser, fetched from nowhere.

The scale is fixed at 0..1, as in the app, so a flat line is flat. The pool's size per
step is drawn the same way on 0..its budget (or its largest size, if more). Each point carries a
tooltip with its value and how many works its mean covers; a mean over another set of
works than the usual one is drawn hollow, as the app does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...model.at import StepKey

WIDTH, HEIGHT = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 36


@dataclass(frozen=True)
class Series:
    name: str
    css: str  # class name: its colour comes from the page's stylesheet
    values: Mapping[StepKey, float]
    counts: dict[StepKey, int]


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    hollow: bool
    title: str


@dataclass(frozen=True)
class Line:
    name: str
    css: str
    points: list[Point]

    @property
    def path(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    lines: list[Line]
    x_labels: list[tuple[float, str]]
    y_labels: list[tuple[float, str]]
    left: int
    right: int
    top: int
    bottom: int


def chart(steps: list[StepKey], series: list[Series], *, scale: float = 1.0, height: int = HEIGHT) -> Chart:
    """Loss curves on 0..1; with `scale`, counts (the pool's tokens) on 0..scale, labelled as numbers."""
    span_x = WIDTH - LEFT - RIGHT
    span_y = height - TOP - BOTTOM

    def shown(v: float) -> str:
        return f"{v:.3f}" if scale == 1.0 else f"{v:,.0f}"

    def x_of(i: int) -> float:
        return LEFT + (span_x / 2 if len(steps) == 1 else i * span_x / (len(steps) - 1))

    def y_of(v: float) -> float:
        return TOP + (1 - min(1.0, max(0.0, v / scale))) * span_y

    lines = []
    for s in series:
        counts = [s.counts[k] for k in s.values if k in s.counts]
        usual = max(set(counts), key=counts.count) if counts else None
        points = []
        for i, key in enumerate(steps):
            if key in s.values:
                n = s.counts.get(key)
                covers = f" over {n} work{'s' if n != 1 else ''}" if n else ""
                title = f"{s.name} e{key[0]} s{key[1]}: {shown(s.values[key])}{covers}"
                points.append(Point(x_of(i), y_of(s.values[key]), n is not None and n != usual, title))
        lines.append(Line(s.name, s.css, points))
    every = max(1, len(steps) // 10)
    x_labels = [(x_of(i), f"e{k[0]}·s{k[1]}") for i, k in enumerate(steps) if i % every == 0]
    y_labels = [(y_of(v * scale / 4), f"{v / 4:.2f}" if scale == 1.0 else f"{v * scale / 4:,.0f}") for v in range(5)]
    return Chart(WIDTH, height, lines, x_labels, y_labels, LEFT, RIGHT, TOP, BOTTOM)
