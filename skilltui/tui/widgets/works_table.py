"""One row per work: its stage in the step, episodes written, latest loss, tokens and cost.

This is the batch of the training picture at a glance. The table takes `WorkRow`s and
touches only the cells whose text changed, because with sixteen works streaming it is
redrawn many times a second.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import on
from textual.cache import LRUCache
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable

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
NAME_WIDTH = 20
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


def tokens_text(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 10_000:
        return f"{tokens / 1000:.0f}k"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)


def short_name(name: str) -> str:
    """A work's name as the table shows it: cut with `…` past NAME_WIDTH, so a long name never
    pushes the tokens and cost off an 80-column screen (the output pane's title names it whole)."""
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…"


def cells(row: WorkRow) -> tuple[Content | str, ...]:
    stage = Content.styled(row.stage, STAGE_STYLES.get(row.stage, ""))
    episodes = f"{row.episodes}/{row.needed}" if row.needed else "-"
    loss = "-" if row.loss is None else f"{row.loss:.3f}"
    cost = "-" if row.cost is None else f"${row.cost:.4f}"
    return (short_name(row.name), stage, episodes, loss, tokens_text(row.tokens), cost)


class WorksTable(DataTable):
    """The works of the run; moving the cursor posts `WorksTable.WorkChosen`."""

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
        for label, key, width in COLUMNS:
            self.add_column(label, key=key, width=width)
        if self._initial:
            self.show(self._initial)

    @property
    def chosen(self) -> str | None:
        if not self.row_count:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return row_key.value

    def show(self, rows: Iterable[WorkRow]) -> None:
        """Bring the table up to date with these rows, touching only what changed."""
        for row in rows:
            values = cells(row)
            plain = tuple(str(v) if isinstance(v, str) else v.plain for v in values)
            shown = self._shown.get(row.name)
            if shown is None:
                self.add_row(*values, key=row.name)
            elif shown != plain:
                for (_, key, _), value, old, new in zip(COLUMNS, values, shown, plain, strict=True):
                    if old != new:
                        self.update_cell(row.name, key, value)
            self._shown[row.name] = plain

    def choose(self, work: str) -> None:
        """Put the cursor on `work` (from the command palette, say)."""
        if work in self._shown:
            self.move_cursor(row=self.get_row_index(work))

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.WorkChosen(event.row_key.value))
