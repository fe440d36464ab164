"""One row per work: its stage in the step, episodes written, latest loss, tokens and cost.

This is the batch of the training picture at a glance. The table takes `WorkRow`s and
touches only the cells whose text changed, because with sixteen works streaming it changes
every second, and a changed cell redraws only its own row (see `update_cell`).

On a narrow terminal (`compact`) the table drops the tokens and cost columns and cuts
names shorter: at 80 columns the full table took 58 of them and left the loss curve a
sliver. The header keeps the run's tokens and cost in sight.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import on
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import CellType, ColumnKey, RowKey

from ...core.words import tokens_text
from ..state import WorkRow

# (label, key, width): fixed widths for the columns that change while a run streams, so an
# update never has to measure the whole column again; the work column sizes to its names.
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
CACHE_SIZES = {
    "_cell_render_cache": 1000,
    "_row_render_cache": 200,
    "_line_cache": 200,
    "_row_renderable_cache": 200,
}
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


class WorksTable(DataTable):
    """The works of the run; moving the cursor posts `WorksTable.WorkChosen`."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    DEFAULT_CSS = """
    WorksTable {
        height: 1fr;
        width: auto;
        background: $surface;
    }
    """

    class WorkChosen(Message):
        """The person moved to another work; the output and report panes follow it."""

        def __init__(self, work: str) -> None:
            super().__init__()
            self.work = work

    def __init__(self, rows: Iterable[WorkRow] = (), **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self._shown: dict[str, tuple[str, ...]] = {}
        self._initial = list(rows)
        self._rows: list[WorkRow] = []
        self.compact = False
        self._size_caches()

    def _size_caches(self) -> None:
        """Keep DataTable's render caches near the size of the table.

        Its caches are keyed by an update counter that every changed cell moves on, so with
        works streaming they fill with renders nobody will ask for again, up to 10,000
        cells and 1,000 rows: tens of thousands of objects that every full garbage
        collection then walks, in the middle of someone's key press.
        """
        for name, size in CACHE_SIZES.items():
            if isinstance(getattr(self, name, None), LRUCache):
                setattr(self, name, LRUCache(size))

    def on_mount(self) -> None:
        self._add_columns()
        if self._initial:
            self.show(self._initial)

    @property
    def columns_shown(self) -> list[tuple[str, str, int | None]]:
        return [c for c in COLUMNS if c[1] in COMPACT_COLUMNS] if self.compact else list(COLUMNS)

    def _add_columns(self) -> None:
        for label, key, width in self.columns_shown:
            self.add_column(label, key=key, width=width)

    def set_compact(self, compact: bool) -> None:
        """Show the narrow table (no tokens, no cost, shorter names) or the full one; the cursor stays on its work."""
        if compact == self.compact:
            return
        chosen = self.chosen
        self.compact = compact
        self.clear(columns=True)
        self._shown = {}
        self._add_columns()
        self.show(self._rows)
        if chosen is not None:
            self.choose(chosen)

    @property
    def chosen(self) -> str | None:
        if not self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return row_key.value

    def show(self, rows: Iterable[WorkRow]) -> None:
        """Bring the table up to date with these rows, touching only what changed."""
        self._rows = rows = list(rows)
        columns = self.columns_shown
        for row in rows:
            values = cells(row, self.compact)
            plain = tuple(str(v) if isinstance(v, str) else v.plain for v in values)
            shown = self._shown.get(row.name)
            if shown is None:
                self.add_row(*values, key=row.name)
            elif shown != plain:
                for (_, key, _), value, old, new in zip(columns, values, shown, plain, strict=True):
                    if old != new:
                        self.update_cell(row.name, key, value)
            self._shown[row.name] = plain

    def update_cell(
        self, row_key: RowKey | str, column_key: ColumnKey | str, value: CellType, *, update_width: bool = False
    ) -> None:
        """Change one cell and redraw its row, not the table.

        DataTable keys every render cache on a counter that each update moves, so one changed
        cell re-rendered every cell and repainted the whole table: 10 ms with 16 works, once a
        second, and a key pressed then waited for it. The columns that change have fixed
        widths (COLUMNS), so new text in one cell cannot move another: this drops the renders
        of that row only and repaints its line. Tied to DataTable's caches as Textual 8.2
        keeps them (pinned); `test_a_changed_cell_redraws_its_row_and_nothing_else` holds it.
        """
        if update_width:
            super().update_cell(row_key, column_key, value, update_width=True)
            return
        row_key, column_key = RowKey(str(row_key)), ColumnKey(str(column_key))
        if row_key not in self._row_locations or column_key not in self._column_locations:
            super().update_cell(row_key, column_key, value)  # raises CellDoesNotExist
            return
        self._data[row_key][column_key] = value
        index = self._row_locations.get(row_key)
        for cache, ours in (
            (self._cell_render_cache, lambda key: key[0] == row_key),
            (self._row_render_cache, lambda key: key[0] == row_key),
            (self._row_renderable_cache, lambda key: key[1] == index),
        ):
            for key in [key for key in cache.keys() if ours(key)]:
                cache.discard(key)
        self._line_cache.clear()  # lines are joined from the rows' renders: cheap to join again
        self.refresh_row(index)

    def choose(self, work: str) -> None:
        """Put the cursor on `work` (from the command palette, say)."""
        if work in self._shown:
            self.move_cursor(row=self.get_row_index(work))

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.WorkChosen(event.row_key.value))
