"""One row per work: its stage in the step, episodes written, latest loss, tokens and cost.

This is the batch of the training picture at a glance, and with sixteen works streaming its
cells change several times a second. It draws each row as one strip of plain segments, kept
until the row's text changes, and repaints only the rows that changed: Textual's DataTable
renders every changed cell through Rich and drops its caches on every update, and a key
pressed then waits for that frame (figures: docs/benchmarks.md, "The app's frames").

On a narrow terminal (`compact`) the table drops the tokens and cost columns and cuts
names shorter, so the loss curve keeps its room beside it. The header keeps the run's tokens and cost in sight.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Unpack

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip
from textual.style import Style

from ....core.words import tokens_text
from ...shared.widgets import WidgetOptions
from ..state import WorkRow
from .steady_scrollbar import SteadyScrollView

# (label, key, width): fixed widths for the columns that change while a run streams, so new
# text never moves another column; the work column sizes to its names.
COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("work", "work", None),
    ("stage", "stage", 8),
    ("eps", "eps", 5),
    ("loss", "loss", 5),
    ("tokens", "tokens", 6),
    ("cost", "cost", 7),
)
COMPACT_COLUMNS = ("work", "stage", "eps", "loss")
COMPACT_BELOW = 110  # terminal columns: narrower than this, the table is compact
NAME_WIDTH = 20
COMPACT_NAME_WIDTH = 14
PADDING = 1  # blank cells on each side of a column's text
STAGE_STYLES = {
    "forward": "$text-primary bold",
    "loss": "$text-accent bold",
    "done": "$text-success",
    "failed": "$text-error bold",
    "sits out": "$foreground-muted",
    "waiting": "$foreground-muted",
}


def short_name(name: str, width: int = NAME_WIDTH) -> str:
    """A work's name as the table shows it: cut with `…` past `width`, so a long name never
    pushes the other columns off the screen (the works box's subtitle names it whole)."""
    return name if len(name) <= width else name[: width - 1] + "…"


def cells(row: WorkRow, compact: bool = False) -> tuple[Content | str, ...]:
    """The row's cells in the columns shown: all of COLUMNS, or COMPACT_COLUMNS on a narrow terminal."""
    every = dict(zip((key for _, key, _ in COLUMNS), _cells(row), strict=True))
    if compact:
        every["work"] = short_name(row.name, COMPACT_NAME_WIDTH)
        return tuple(every[key] for key in COMPACT_COLUMNS)
    return tuple(every.values())


def _cells(row: WorkRow) -> tuple[Content | str, ...]:
    stage = Content.styled(row.stage, STAGE_STYLES.get(row.stage, ""))
    episodes = f"{row.episodes}/{row.needed}" if row.needed else "-"
    loss = "-" if row.loss is None else f"{row.loss:.3f}"
    cost = "-" if row.cost is None else f"${row.cost:.4f}"
    return (short_name(row.name), stage, episodes, loss, tokens_text(row.tokens), cost)


class WorksTable(SteadyScrollView, can_focus=True):
    """The works of the run, a header above them; moving the cursor posts `WorksTable.WorkChosen`."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]
    COMPONENT_CLASSES = {"works-table--header", "works-table--cursor"}
    # DataTable's look, which this table replaced.
    DEFAULT_CSS = """
    WorksTable {
        height: 1fr;
        width: auto;
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: auto;
        & > .works-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .works-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .works-table--header { background-tint: $foreground 5%; }
            & > .works-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
    }
    """

    class WorkChosen(Message):
        """The person moved to another work; the output and report panes follow it."""

        def __init__(self, work: str) -> None:
            super().__init__()
            self.work = work

    # A `var`: moving the cursor repaints its two rows, not the table.
    cursor_row: var[int] = var(0, init=False)

    def __init__(self, rows: Iterable[WorkRow] = (), **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self.compact = False
        self._rows: list[WorkRow] = []
        self._cells: dict[str, tuple[Content | str, ...]] = {}  # by work: the cells it shows
        self._names: list[str] = []  # the works in the table's order
        self._strips: dict[tuple[str, bool], tuple[tuple[str, ...], int, Strip]] = {}
        self._name_width = len("work")
        if rows:
            self.show(rows)

    # -- what the table holds ----------------------------------------------------------------

    @property
    def columns_shown(self) -> list[tuple[str, str, int | None]]:
        return [c for c in COLUMNS if c[1] in COMPACT_COLUMNS] if self.compact else list(COLUMNS)

    @property
    def row_count(self) -> int:
        return len(self._names)

    @property
    def chosen(self) -> str | None:
        return self._names[self.cursor_row] if self._names else None

    def get_cell(self, work: str, column: str) -> Content | str:
        """The cell of `work` in `column` as the table shows it."""
        keys = [key for _, key, _ in self.columns_shown]
        return self._cells[work][keys.index(column)]

    def show(self, rows: Iterable[WorkRow]) -> None:
        """Bring the table up to date with these rows, repainting only the rows whose text changed."""
        self._rows = rows = list(rows)
        names = [row.name for row in rows]
        if names != self._names:
            chosen, first = self.chosen, not self._names
            self._names = names
            self._cells = {row.name: cells(row, self.compact) for row in rows}
            self._resize()
            if chosen in names:
                self.set_reactive(WorksTable.cursor_row, names.index(chosen))
            self.refresh()
            if first and names:
                self.post_message(self.WorkChosen(names[self.cursor_row]))
            return
        for index, row in enumerate(rows):
            values = cells(row, self.compact)
            if _plain(values) != _plain(self._cells[row.name]):
                self._cells[row.name] = values
                self._refresh_row(index)

    def set_compact(self, compact: bool) -> None:
        """Show the narrow table (no tokens, no cost, shorter names) or the full one; the cursor stays on its work."""
        if compact == self.compact:
            return
        self.compact = compact
        self._cells = {row.name: cells(row, compact) for row in self._rows}
        self._resize()
        self.refresh(layout=True)

    def _resize(self) -> None:
        names = [_text(values[0]) for values in self._cells.values()]
        self._name_width = max([len("work"), *map(len, names)])
        self.virtual_size = Size(self._width(), len(self._names) + 1)

    def _widths(self) -> list[int]:
        return [self._name_width if width is None else width for _, _, width in self.columns_shown]

    def _width(self) -> int:
        return sum(width + 2 * PADDING for width in self._widths())

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self._width()

    # -- the cursor ----------------------------------------------------------------------------

    def choose(self, work: str) -> None:
        """Put the cursor on `work` (from the command palette, say)."""
        if work in self._names:
            self.move_cursor(row=self._names.index(work))

    def move_cursor(self, *, row: int) -> None:
        if self._names:
            self.cursor_row = max(0, min(row, len(self._names) - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._refresh_row(old)
        self._refresh_row(new)
        visible = max(1, self.scrollable_content_region.height - 1)  # the header's line is not the rows'
        top = int(self.scroll_y)
        if new < top:
            self.scroll_to(y=new, animate=False, immediate=True)
        elif new >= top + visible:
            self.scroll_to(y=new - visible + 1, animate=False, immediate=True)
        if self._names:
            self.post_message(self.WorkChosen(self._names[new]))

    def action_cursor(self, step: int) -> None:
        self.move_cursor(row=self.cursor_row + step)

    def action_page(self, direction: int) -> None:
        self.move_cursor(row=self.cursor_row + direction * max(1, self.scrollable_content_region.height - 1))

    def action_first(self) -> None:
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self.move_cursor(row=len(self._names) - 1)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and offset.y >= 1:
            self.move_cursor(row=int(self.scroll_y) + offset.y - 1)

    # -- drawing -------------------------------------------------------------------------------

    def _refresh_row(self, index: int) -> None:
        self.refresh(Region(0, index + 1 - int(self.scroll_y), self.size.width, 1))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # the theme or the focus changed the styles the strips were drawn in

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.refresh()  # every row moved to another line

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            labels = tuple(label for label, _, _ in self.columns_shown)
            return self._strip("", labels, "works-table--header", width)
        index = int(self.scroll_y) + y - 1
        if index >= len(self._names):
            return Strip.blank(width, self.rich_style)
        name = self._names[index]
        cursor = "works-table--cursor" if index == self.cursor_row else ""
        return self._strip(name, self._cells[name], cursor, width)

    def _strip(self, name: str, values: tuple[Content | str, ...], component: str, width: int) -> Strip:
        """One line of the table, drawn again only when its text, its cursor or the width changed."""
        key, plain = (name, bool(component)), _plain(values)
        cached = self._strips.get(key)
        if cached is not None and cached[:2] == (plain, width):
            return cached[2]
        base: Style = self.get_visual_style(component) if component else self.visual_style
        line = Content.assemble(
            *(_padded(value, column_width) for value, column_width in zip(values, self._widths(), strict=True))
        )
        if component:  # the cursor's and the header's colours win over a stage's, as DataTable drew them
            line = Content(line.plain)
        segments = [Segment(text, style.rich_style) for text, style in line.render(base, end="")]
        strip = Strip(segments).crop_extend(0, width, base.rich_style)
        self._strips[key] = (plain, width, strip)
        return strip


class WorksBox(Vertical):
    """The works table's box: "works" on its top border, the chosen work and its stage's time at its foot."""

    _named: str | None = None

    def name_work(self, text: str) -> None:
        """Put `text` on the box's foot, repainting that line only.

        Setting `border_subtitle` repaints the whole box, border and table, in every key that
        chooses another work, though the foot is the one line it is drawn on.
        """
        if text == self._named:
            return
        self._named = text
        width, height = self.outer_size
        if not height:  # not laid out yet: the first frame draws it all anyway
            self.border_subtitle = text
            return
        # What the `border_subtitle` setter stores (Textual 8.2, pinned), without its full repaint.
        self._border_subtitle = self.render_str(text).expand_tabs(4).split()[0]
        inside = self.content_offset  # a refresh's regions are counted from inside the border
        self.refresh(Region(-inside.x, height - 1 - inside.y, width, 1))


def _text(value: Content | str) -> str:
    return value if isinstance(value, str) else value.plain


def _plain(values: tuple[Content | str, ...]) -> tuple[str, ...]:
    return tuple(map(_text, values))


def _padded(value: Content | str, width: int) -> Content:
    """A cell's text cut or filled to its column's width, a blank on each side."""
    content = Content(value) if isinstance(value, str) else value
    return content.truncate(width, pad=True).pad(PADDING, PADDING)
