"""The loss curve: every work's loss per step, the selected work picked out, their mean, and validation.

Training is working when the mean goes down; it transfers when the validation line (the
mean loss of the held-out works, measured after each step) goes down with it.
A step's mean covers the works scored that step: when a work failed or sat out, that
point is a mean over another set of works and is drawn hollow (○, △), and the legend says
how many works the points cover, so no one reads a drop that only a missing work made.
The legend's mean is the latest step's, the one under way included: while its works are
being scored it reads "2 of 4 works".

Sixteen coloured lines would be a tangle in a terminal, so the other works are faint dots,
the selected work is an accent line and the mean a bold line on top. The scale is fixed at
0..1 (loss is defined on it), so a curve that looks flat is flat. Colours are theme variables, readable in every theme.

Below MIN_PLOT_ROWS rows (80x24 with the end summary open gives the chart 3) a row spans a
third of the scale or more, so 0.752 and 0.557 share a row and the chart reads as flat; the
widget then writes the numbers instead, one step a row: first step, last steps, and `…`
between when they do not all fit.
"""

from __future__ import annotations

from typing import NamedTuple, Unpack

from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Region
from textual.reactive import var
from textual.strip import Strip
from textual.widget import Widget

from ....model.at import StepKey
from ....model.figures import Mean
from ...shared.widgets import WidgetOptions

MEAN_STYLE = "$text-primary bold"
SELECTED_STYLE = "$text-accent bold"
OTHER_STYLE = "$foreground-muted"
VAL_STYLE = "$text-warning bold"
AXIS_STYLE = "$foreground-muted"
AXIS_WIDTH = 5
MIN_PLOT_ROWS = 6  # a row then spans 0.2 of the scale at most; fewer, and the numbers are shown


def axis_label(y: int, plot_height: int) -> str:
    """The loss axis beside row `y`: 1.0 at the top, 0.0 at the foot, and the middle row's value.

    A row holds the losses that `round` to it, so its label is the loss at its centre: on
    10 rows the middle one is 0.56, and one decimal ("0.6") would name a value the row
    does not hold. Two decimals are used only where one would be wrong.
    """
    if y in (0, plot_height - 1) or (y == (plot_height - 1) // 2 and plot_height >= 5):
        value = 1 - y / (plot_height - 1)
        text = f"{value:.1f}" if abs(value * 10 - round(value * 10)) < 1e-9 else f"{value:.2f}"
        return f"{text:<4}┤"
    return "    │"


def step_label(key: StepKey) -> str:
    return f"e{key[0]}·s{key[1]}"


class _Pen(NamedTuple):
    """How one series is drawn: its point's glyph and style, and its weight where series meet in a cell."""

    point: str
    style: str
    line: int  # the weight of its joining dots
    dot: int  # the weight of its points
    hollow: str = ""  # the glyph of a point that is a mean over another set of works


class _Canvas:
    """A character grid where a higher-priority mark wins the cell."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells: list[list[tuple[int, str, str]]] = [[(0, " ", "")] * width for _ in range(height)]

    def put(self, x: int, y: int, char: str, style: str, priority: int) -> None:
        if 0 <= x < self.width and 0 <= y < self.height and self.cells[y][x][0] < priority:
            self.cells[y][x] = (priority, char, style)

    def row(self, y: int) -> Content:
        """One row as few styled runs as it can be: a blank joins the run before it.

        A blank looks the same in any of these styles (they colour text, not the background),
        and every run costs Textual a styled segment on each frame that draws the curve: one
        run per mark and one per gap made the curve the dearest widget of a key's frame.
        """
        parts: list[list[str]] = []
        for _, char, style in self.cells[y]:
            if parts and (parts[-1][1] == style or char == " "):
                parts[-1][0] += char
            elif parts and parts[-1][0].isspace():
                parts[-1] = [parts[-1][0] + char, style]  # a run of blanks takes the mark's style
            else:
                parts.append([char, style])
        return Content.assemble(*((text, style) for text, style in parts))


class LossCurve(Widget):
    """Loss per step for every work, and the mean; `show()` sets the data, `selected` picks a work."""

    DEFAULT_CSS = """
    LossCurve {
        background: $surface;
        padding: 0 1;
    }
    """

    # A `var`: choosing a work repaints the rows it changed (`_repaint`), not the widget.
    selected: var[str | None] = var(None, init=False)

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._steps: list[StepKey] = []
        self._series: dict[str, dict[StepKey, float]] = {}
        self._mean_of: dict[StepKey, Mean] = {}
        self._means: dict[StepKey, float] = {}
        self._val_of: dict[StepKey, Mean] = {}
        self._val: dict[StepKey, float] = {}
        self._val_counts: dict[StepKey, int] = {}
        self._version = 0  # moves on with every show(): the rows drawn for the last one are stale
        self._drawn: tuple[tuple[object, ...], list[Content]] | None = None
        self._strips: LRUCache[tuple[object, ...], Strip] = LRUCache(512)

    def show(
        self,
        steps: list[StepKey],
        series: dict[str, dict[StepKey, float]],
        means: dict[StepKey, Mean],
        val_means: dict[StepKey, Mean] | None = None,
    ) -> None:
        val_means = val_means or {}
        keys = [key for key in steps if key in means or key in val_means or any(key in s for s in series.values())]
        self._steps = keys
        self._series = {work: dict(values) for work, values in series.items()}
        self._mean_of = dict(means)
        self._means = {key: mean.value for key, mean in means.items()}
        self._val_of = dict(val_means)
        self._val = {key: mean.value for key, mean in val_means.items()}
        self._val_counts = {key: mean.works for key, mean in val_means.items()}
        self._version += 1
        self._repaint()

    def watch_selected(self) -> None:
        self._repaint()

    def _repaint(self) -> None:
        """Repaint the rows that read otherwise than those drawn last; all of them if their number changed.

        Textual's path for each repainted line (padding, filters, cache) has a cost even when the
        row's strip is kept, and a new selection changes a few rows of twenty.
        """
        before = self._drawn[1] if self._drawn is not None else None
        rows = self._rows()
        if before is None or len(before) != len(rows):
            self.refresh()
            return
        width = self.content_size.width
        for y, (old, new) in enumerate(zip(before, rows, strict=True)):
            if (old.plain, old.spans) != (new.plain, new.spans):
                self.refresh(Region(0, y, width, 1))

    def _odd_means(self) -> set[StepKey]:
        """Steps whose mean covers another set of works than the most common one, or not all it scheduled."""
        sets = [mean.covers for mean in self._mean_of.values()]
        if not sets:
            return set()
        usual = max(set(sets), key=lambda s: (sets.count(s), len(s)))
        return {k for k, mean in self._mean_of.items() if mean.covers != usual or mean.partial}

    def _odd_val(self) -> set[StepKey]:
        counts = list(self._val_counts.values())
        return {k for k, n in self._val_counts.items() if n < max(counts)} if counts else set()

    def _legend(self, width: int) -> Content:
        parts: list[str | tuple[str, str]] = []
        if self._mean_of:
            latest = self._mean_of[max(self._mean_of, key=self._steps.index)]
            odd = " ○ other works" if self._odd_means() else ""
            parts.append((f"━● mean {latest.text()}{odd}", MEAN_STYLE))
        if self._val_of:
            last_val = self._val_of[max(self._val_of, key=self._steps.index)]
            parts += ["  ", (f"━▲ val {last_val.text()}", VAL_STYLE)]
        selected = self._series.get(self.selected or "", {})
        if selected:
            last_key = max(selected, key=lambda k: self._steps.index(k) if k in self._steps else -1)
            parts += ["  ", (f"─◆ {self.selected} {selected[last_key]:.3f}", SELECTED_STYLE)]
        legend = Content.assemble(*parts)
        others = Content.styled("  · other works", OTHER_STYLE)
        if len(self._series) > 1 and legend.cell_length + others.cell_length <= width:
            legend = Content.assemble(legend, others)
        return legend.truncate(width, ellipsis=True)

    def _numbers(self, width: int, height: int) -> list[Content]:
        """The legend, then one row per step with its mean, validation and selected work's loss."""
        lines = [self._legend(width)]
        rows = height - 1
        steps: list[StepKey | None] = list(self._steps)
        if len(steps) > rows >= 2:
            steps = [steps[0], *([None] if rows >= 3 else []), *steps[len(steps) - rows + (2 if rows >= 3 else 1) :]]
        selected = self._series.get(self.selected or "", {})
        for key in steps[: max(rows, 0)]:
            if key is None:
                lines.append(Content.styled("…", AXIS_STYLE))
                continue
            parts: list[tuple[str, str]] = [(f"{step_label(key):<8}", AXIS_STYLE)]
            if key in self._means:
                parts.append((f"● {self._means[key]:.3f}  ", MEAN_STYLE))
            if key in self._val:
                parts.append((f"▲ {self._val[key]:.3f}  ", VAL_STYLE))
            if key in selected:
                parts.append((f"◆ {selected[key]:.3f}", SELECTED_STYLE))
            lines.append(Content.assemble(*parts).truncate(width, ellipsis=True))
        return lines

    # -- drawing: one strip per row, kept while the row reads the same ------------------------
    #
    # Choosing another work redraws the whole curve, and Textual's path from one Content of
    # every row to strips is a large part of such a key's frame (`bench/bench_tui.py`). The rows
    # are drawn here as Content once per change of data, selection or size, and each row's
    # strip is kept by its text and styles: the rows the selection did not touch, and every
    # row when the person comes back to a work, are the strips drawn before.

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # a theme or a style changed what the strips were drawn in

    def _rows(self) -> list[Content]:
        key = (self._version, self.selected, self.content_size)
        if self._drawn is None or self._drawn[0] != key:
            self._drawn = (key, self._draw())
        return self._drawn[1]

    def render_line(self, y: int) -> Strip:
        rows, width = self._rows(), self.content_size.width
        row = rows[y] if y < len(rows) else Content("")
        key = (row.plain, tuple(row.spans), width)
        strip = self._strips.get(key)
        if strip is None:
            strip = Strip(row.render_segments(self.visual_style)).crop_extend(0, width, self.rich_style)
            self._strips[key] = strip
        return strip

    def render(self) -> Content:
        """The curve as one Content, row under row: what `render_line` draws, as text to read."""
        return Content("\n").join(self._rows())

    def _draw(self) -> list[Content]:
        """The curve's rows as they fit the widget now."""
        width, height = self.content_size.width, self.content_size.height
        if not self._steps:
            empty = Content.styled(
                "no loss yet: the curve starts when the first work is scored", f"{AXIS_STYLE} italic"
            )
            return empty.wrap(width) if width > 0 else []
        plot_height = height - 2
        plot_width = width - AXIS_WIDTH
        if plot_height < MIN_PLOT_ROWS or plot_width < 4:
            return self._numbers(width, height)
        canvas = _Canvas(plot_width, plot_height)
        count = len(self._steps)

        def x_of(index: int) -> int:
            return 0 if count == 1 else round(index * (plot_width - 1) / (count - 1))

        def y_of(value: float) -> int:
            return round((1.0 - min(1.0, max(0.0, value))) * (plot_height - 1))

        def draw(values: dict[StepKey, float], pen: _Pen, joined: bool, odd: set[StepKey] | None = None) -> None:
            point, style, line, dot, hollow = pen
            previous: tuple[int, int] | None = None
            for index, key in enumerate(self._steps):
                if key not in values:
                    continue
                x, y = x_of(index), y_of(values[key])
                if joined and previous is not None:
                    (x0, y0), span = previous, x - previous[0]
                    for step in range(1, span):
                        canvas.put(x0 + step, round(y0 + (y - y0) * step / span), "·", style, line)
                canvas.put(x, y, hollow if odd and key in odd else point, style, dot)
                previous = (x, y)

        # Who wins a cell: the selected work's points (the person asked for them), then the
        # mean's points, then the two lines, then the other works.
        for work, values in self._series.items():
            if work != self.selected:
                draw(values, _Pen("•", OTHER_STYLE, 1, 1), joined=False)
        draw(self._val, _Pen("▲", VAL_STYLE, 2, 3, hollow="△"), joined=True, odd=self._odd_val())
        draw(self._means, _Pen("●", MEAN_STYLE, 2, 4, hollow="○"), joined=True, odd=self._odd_means())
        if self.selected in self._series:
            draw(self._series[self.selected], _Pen("◆", SELECTED_STYLE, 3, 5), joined=True)

        lines = [self._legend(width)]
        for y in range(plot_height):
            lines.append(Content.assemble((axis_label(y, plot_height), AXIS_STYLE), canvas.row(y)))
        first, last = step_label(self._steps[0]), step_label(self._steps[-1])
        axis = first if count == 1 else first + " " * max(1, plot_width - len(first) - len(last)) + last
        lines.append(Content.styled(" " * AXIS_WIDTH + axis, AXIS_STYLE))
        return lines
