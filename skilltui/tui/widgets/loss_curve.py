"""The loss curve: every work's loss per step, the selected work picked out, and their mean.

Training is working when the mean goes down. Sixteen coloured lines would be a tangle in
a terminal, so the other works are faint dots, the selected work is an accent line and
the mean a bold line on top. The scale is fixed at 0..1 (loss is defined on it), so a
curve that looks flat is flat. Colours are theme variables, readable in every theme.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ..state import StepKey

MEAN_STYLE = "$text-primary bold"
SELECTED_STYLE = "$text-accent bold"
OTHER_STYLE = "$foreground-muted"
AXIS_STYLE = "$foreground-muted"
AXIS_WIDTH = 5


def step_label(key: StepKey) -> str:
    return f"e{key[0]}·s{key[1]}"


class _Canvas:
    """A character grid where a higher-priority mark wins the cell."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells: list[list[tuple[int, str, str]]] = [[(0, " ", "")] * width for _ in range(height)]

    def put(self, x: int, y: int, char: str, style: str, priority: int) -> None:
        if 0 <= x < self.width and 0 <= y < self.height and self.cells[y][x][0] < priority:
            self.cells[y][x] = (priority, char, style)

    def row(self, y: int) -> Content:
        parts: list[tuple[str, str]] = []
        for _, char, style in self.cells[y]:
            if parts and parts[-1][1] == style:
                parts[-1] = (parts[-1][0] + char, style)
            else:
                parts.append((char, style))
        return Content.assemble(*parts)


class LossCurve(Widget):
    """Loss per step for every work, and the mean; `show()` sets the data, `selected` picks a work."""

    DEFAULT_CSS = """
    LossCurve {
        background: $surface;
        padding: 0 1;
    }
    """

    selected: reactive[str | None] = reactive(None)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._steps: list[StepKey] = []
        self._series: dict[str, dict[StepKey, float]] = {}
        self._means: dict[StepKey, float] = {}

    def show(self, steps: list[StepKey], series: dict[str, dict[StepKey, float]], means: dict[StepKey, float]) -> None:
        keys = [key for key in steps if key in means or any(key in s for s in series.values())]
        self._steps = keys
        self._series = {work: dict(values) for work, values in series.items()}
        self._means = dict(means)
        self.refresh()

    def _legend(self, width: int) -> Content:
        parts: list[str | tuple[str, str]] = []
        if self._means:
            last = self._means[max(self._means, key=self._steps.index)] if self._steps else None
            parts.append(("━● mean" + (f" {last:.3f}" if last is not None else ""), MEAN_STYLE))
        selected = self._series.get(self.selected or "", {})
        if selected:
            last_key = max(selected, key=lambda k: self._steps.index(k) if k in self._steps else -1)
            parts += ["  ", (f"─◆ {self.selected} {selected[last_key]:.3f}", SELECTED_STYLE)]
        legend = Content.assemble(*parts)
        others = Content.styled("  · other works", OTHER_STYLE)
        if len(self._series) > 1 and legend.cell_length + others.cell_length <= width:
            legend = Content.assemble(legend, others)
        return legend.truncate(width, ellipsis=True)

    def render(self) -> Content:
        width, height = self.content_size.width, self.content_size.height
        if not self._steps:
            return Content.styled("no loss yet: the curve starts when the first work is scored", f"{AXIS_STYLE} italic")
        plot_height = height - 2
        plot_width = width - AXIS_WIDTH
        if plot_height < 3 or plot_width < 4:
            return self._legend(width)
        canvas = _Canvas(plot_width, plot_height)
        count = len(self._steps)

        def x_of(index: int) -> int:
            return 0 if count == 1 else round(index * (plot_width - 1) / (count - 1))

        def y_of(value: float) -> int:
            return round((1.0 - min(1.0, max(0.0, value))) * (plot_height - 1))

        def draw(values: dict[StepKey, float], point: str, style: str, line: int, dot: int, joined: bool) -> None:
            previous: tuple[int, int] | None = None
            for index, key in enumerate(self._steps):
                if key not in values:
                    continue
                x, y = x_of(index), y_of(values[key])
                if joined and previous is not None:
                    (x0, y0), span = previous, x - previous[0]
                    for step in range(1, span):
                        canvas.put(x0 + step, round(y0 + (y - y0) * step / span), "·", style, line)
                canvas.put(x, y, point, style, dot)
                previous = (x, y)

        # Who wins a cell: the selected work's points (the person asked for them), then the
        # mean's points, then the two lines, then the other works.
        for work, values in self._series.items():
            if work != self.selected:
                draw(values, "•", OTHER_STYLE, 1, 1, joined=False)
        draw(self._means, "●", MEAN_STYLE, 2, 4, joined=True)
        if self.selected in self._series:
            draw(self._series[self.selected], "◆", SELECTED_STYLE, 3, 5, joined=True)

        lines = [self._legend(width)]
        for y in range(plot_height):
            if y == 0:
                label = "1.0 ┤"
            elif y == plot_height - 1:
                label = "0.0 ┤"
            elif y == (plot_height - 1) // 2 and plot_height >= 5:
                label = f"{1 - y / (plot_height - 1):.1f} ┤"
            else:
                label = "    │"
            lines.append(Content.assemble((label, AXIS_STYLE), canvas.row(y)))
        first, last = step_label(self._steps[0]), step_label(self._steps[-1])
        axis = first if count == 1 else first + " " * max(1, plot_width - len(first) - len(last)) + last
        lines.append(Content.styled(" " * AXIS_WIDTH + axis, AXIS_STYLE))
        return Content("\n").join(lines)
