"""The selected work's agent output, streamed as it arrives, wrapped and searchable.

The engine emits a `delta` for every piece of streamed text; redrawing per delta would
spend the event loop on the screen instead of the run. So the app folds deltas into a
bounded `OutputBuffer` per work and calls `catch_up()` on a timer: the pane gets the new
text in one write, or reloads the whole buffer when it fell behind what the buffer keeps.

Long lines wrap at word boundaries to the pane's width (a writer's paragraph is one line),
and wrap again when the terminal is resized. The pane follows the stream until the person
scrolls back, and only the person's scrolling decides that: a resize that moves the end
away from the view leaves it following, so the person never finds it stuck on old text. `/` asks
for a search; matches are highlighted and `n` / `N` go to the next and previous one.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple, Unpack

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.selection import Selection
from textual.strip import Strip

from ...shared.widgets import WidgetOptions
from ..output import OutputBuffer, extend_rows, trim_rows, wrap_spans
from .output_search import OutputSearch
from .steady_scrollbar import SteadyScrollView
from .works_table import WorksTable

KEPT_WORKS = 4  # works whose wrapped rows are kept for coming back to them
Maker = Callable[[int, int, int, Style], Strip]  # a row's strip from (line number, start, end, style)


@dataclass(frozen=True, slots=True)
class Frame:
    """What every row of one frame is drawn with: the pane's width and its style (read once a frame)."""

    width: int
    style: Style


class _Kept(NamedTuple):
    """A work's output as the pane last showed it (`LiveOutput._keep`)."""

    buffer: OutputBuffer
    lines: list[str]
    rows: list[tuple[int, int, int]]
    dropped: int
    seen: int
    wrap_width: int
    cache: LRUCache
    drawn: LRUCache


def plain_row(lines: list[str], dropped: int, number: int, start: int, end: int, style: Style) -> Strip:
    """Row `(number, start, end)` of `lines` as one segment in the pane's style: a row with no search on."""
    return Strip([Segment(lines[number - dropped][start:end], style)])


def placed_row(
    cache: LRUCache, drawn: LRUCache, key: tuple[int, int, int], index: int, frame: Frame, make: Maker
) -> Strip:
    """Row `key` as drawn at `index`: cut to the frame's width, its place recorded for a mouse selection.

    Kept in `drawn` by place (streaming scrolls every row up by one place, so the place is in
    the key; strips of rows gone by age out), the strip before placing in `cache` by row, made
    by `make(*key, style)` the first time.
    """
    width, style = frame.width, frame.style
    place = (key, index, width)
    strip = drawn.get(place)
    if strip is None:
        strip = cache.get(key)
        if strip is None:
            strip = cache[key] = make(*key, style)
        strip = drawn[place] = strip.crop_extend(0, width, style).apply_offsets(0, index)
    return strip


class LiveOutput(OutputSearch, SteadyScrollView, can_focus=True):
    """A wrapped, searchable view that follows one work's `OutputBuffer`."""

    COMPONENT_CLASSES = {"live-output--match", "live-output--current", "live-output--status"}
    DEFAULT_CSS = """
    LiveOutput {
        background: $surface;
        color: $foreground;
        padding: 0 1;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-size-vertical: 1;
        &:focus { background-tint: $foreground 4%; }
        & > .live-output--match { background: $warning 30%; color: $foreground; }
        & > .live-output--current { background: $primary; color: $background; text-style: bold; }
        & > .live-output--status { background: $panel; color: $foreground; text-style: bold; }
    }
    """
    BINDINGS = [
        Binding("n", "next_match(1)", "Next match"),
        Binding("N", "next_match(-1)", "Previous match"),
        Binding("escape", "end_search", "End search"),
        # A search gives this pane the keys; j / k still choose a work, as everywhere on the main screen.
        Binding("j", "choose_work(1)", "Next work", show=False),
        Binding("k", "choose_work(-1)", "Previous work", show=False),
    ]

    work: reactive[str | None] = reactive(None, init=False)

    def action_choose_work(self, step: int) -> None:
        """j / k: the works table's next or previous work, whose output this pane then shows."""
        self.screen.query_one(WorksTable).action_cursor(step)

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._seen = 0
        self._buffer: OutputBuffer | None = None
        self._lines: list[str] = []  # logical lines; the last one is the line the stream writes into
        self._dropped = 0  # lines dropped from the front: a row's line number minus this is its index
        self._rows: list[tuple[int, int, int]] = []  # (line number, start, end), one per drawn row
        self._wrap_width = 0
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(1024)
        self._drawn: LRUCache[tuple[tuple[int, int, int], int, int], Strip] = LRUCache(256)  # see render_line
        self._kept: dict[str, _Kept] = {}  # by work: what `_keep` remembered, the last KEPT_WORKS shown
        self._frame: Frame | None = None
        self._following = True
        self.search_text = ""
        self.status = ""  # the search's line at the foot of the pane while a search is on
        self._current: tuple[int, int] | None = None  # (line number, offset) of the current match

    # -- the text ---------------------------------------------------------------------------

    @property
    def lines(self) -> list[str]:
        """The logical lines shown (before wrapping)."""
        return self._lines[:-1] if self._lines and self._lines[-1] == "" else list(self._lines)

    def follow(self, work: str | None, buffer: OutputBuffer | None) -> None:
        """Show `work`'s output from its buffer's start, and follow it from now on."""
        self._keep()
        self._buffer = buffer
        self.work = work
        self._following = True
        kept = self._kept.pop(work, None) if work is not None else None
        if kept is None or kept.buffer is not buffer or kept.wrap_width != self._width():
            self._reload()
            return
        # Back to a work shown a moment ago: its rows as wrapped then, and only what it gained since.
        self._lines, self._rows, self._dropped, self._seen = kept.lines, kept.rows, kept.dropped, kept.seen
        self._wrap_width, self._cache, self._drawn = kept.wrap_width, kept.cache, kept.drawn
        self._current = None
        self._size_rows()
        self.catch_up()
        self._stay_at_end()
        self.refresh()

    def _keep(self) -> None:
        """Remember the shown work's wrapped rows and strips: a person goes back and forth between works,
        and wrapping a whole buffer again would cost each such key a part of its frame."""
        if self.work is not None and self._buffer is not None and not self.search_text:
            self._kept[self.work] = _Kept(
                buffer=self._buffer,
                lines=self._lines,
                rows=self._rows,
                dropped=self._dropped,
                seen=self._seen,
                wrap_width=self._wrap_width,
                cache=self._cache,
                drawn=self._drawn,
            )
            while len(self._kept) > KEPT_WORKS:
                del self._kept[next(iter(self._kept))]
        self._cache, self._drawn = LRUCache(1024), LRUCache(256)

    def _forget(self, kept: bool = True) -> None:
        """Drop the strips drawn (a search, a theme or a width changed how rows draw), and the kept works' too."""
        self._cache.clear()
        self._drawn.clear()
        if kept:
            self._kept.clear()

    def _reload(self) -> None:
        buffer = self._buffer
        self.clear()
        if buffer is not None:
            self.write(buffer.text())
            self._seen = buffer.total

    def clear(self) -> None:
        self._lines, self._rows, self._dropped, self._seen = [], [], 0, 0
        self._current = None
        self._forget(kept=False)
        self._size_rows()
        self.refresh()

    def catch_up(self) -> None:
        """Write whatever the buffer gained since the last call."""
        buffer = self._buffer
        if buffer is None:
            return
        new = buffer.since(self._seen)
        if new is None:
            # The buffer dropped text this pane never showed: start again from what it keeps.
            following = self._following
            self._reload()
            self._following = following
            self._stay_at_end()
            return
        self._seen = buffer.total
        if new:
            self.write(new)

    def write(self, text: str, scroll_end: bool | None = None) -> None:
        """Append streamed text; the pane stays at the end if it was following."""
        if not text:
            return
        width = self._width()
        if width != self._wrap_width:
            self._rewrap()
        extend_rows(self._lines, self._rows, self._dropped, text, width)
        self._dropped, first = trim_rows(self._lines, self._rows, self._dropped)
        if first and not self._following:
            self.scroll_to(y=max(0, self.scroll_y - first), animate=False, immediate=True)
        self._size_rows()
        if scroll_end or (scroll_end is None and self._following):
            self._stay_at_end()
        self.refresh()

    def catch_up_kept(self, works: set[str]) -> None:
        """Wrap what the kept `works` gained and draw their last rows now, in the stream's frame.

        A key that goes back to a kept work then shows rows already drawn. Without this, the key
        after each flush wrapped and drew everything its work gained since (up to a second of
        stream while keys come), and those keys were the slowest of a person flipping between works.
        """
        if self._frame is None:
            return  # never drawn: nothing to draw ahead with
        width = self._frame.width
        height = self.scrollable_content_region.height
        for work in works & self._kept.keys():
            kept = self._kept[work]
            new = kept.buffer.since(kept.seen)
            if new is None:
                del self._kept[work]  # it dropped text never wrapped here: shown again, it reloads
                continue
            if not new or kept.wrap_width != width:
                continue
            extend_rows(kept.lines, kept.rows, kept.dropped, new, width)
            dropped, _ = trim_rows(kept.lines, kept.rows, kept.dropped)
            self._kept[work] = kept._replace(dropped=dropped, seen=kept.buffer.total)
            # The rows a pane following this work shows at its end, as `render_line` draws them.
            make = partial(plain_row, kept.lines, dropped)  # kept works have no search on
            for index in range(max(0, len(kept.rows) - height), len(kept.rows)):
                placed_row(kept.cache, kept.drawn, kept.rows[index], index, self._frame, make)

    def _width(self) -> int:
        width = self.scrollable_content_region.width
        return width if width > 0 else self._wrap_width or 80

    def _rewrap(self) -> None:
        """Wrap every line again for a new width, keeping the top row's line in view."""
        width = self._width()
        if width == self._wrap_width and self._rows:
            return
        top = self._rows[int(self.scroll_y)][0] if int(self.scroll_y) < len(self._rows) else None
        self._wrap_width = width
        self._rows = [
            (self._dropped + index, start, end)
            for index, line in enumerate(self._lines)
            for start, end in wrap_spans(line, width)
        ]
        self._forget()
        self._size_rows()
        if self._following:
            self._stay_at_end()
        elif top is not None:
            self.scroll_to(y=bisect_right(self._rows, (top, -1, -1)), animate=False, immediate=True)
        self.refresh()

    def _size_rows(self) -> None:
        # The search's status line covers the pane's last row: one more row keeps the text clear of it.
        size = Size(self._wrap_width, len(self._rows) + (1 if self.status else 0))
        if size == self.virtual_size:
            return
        if not self.size or self.styles.auto_dimensions:
            self.virtual_size = size  # not laid out yet, or sized by its text: the layout must know
            return
        # The pane's box does not depend on its text and its scrollbars are fixed by `overflow`,
        # so more rows move the scrollbar's thumb and nothing else. Setting `virtual_size` the
        # usual way asks for a layout of the whole screen, which every streamed write and every
        # work switch would pay for: update the scrollbar directly.
        self.set_reactive(LiveOutput.virtual_size, size)
        self._scroll_update(size)
        self.refresh()

    def _stay_at_end(self) -> None:
        self.scroll_end(animate=False, immediate=True, x_axis=False)
        self._following = True

    # -- following: only the person's scrolling stops it ------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self._rewrap()
        if self._following:
            self.call_after_refresh(self._stay_at_end)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new < old and new < self.max_scroll_y:
            self._following = False  # scrolled back: the person reads; the stream must not pull them down
        elif new >= self.max_scroll_y:
            self._following = True

    # -- drawing ----------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._forget()

    def render_lines(self, crop: Region) -> list[Strip]:
        # Once per frame, not once per line: the style walks the widget's ancestors, and a
        # frame of a full pane draws dozens of lines.
        self._frame = Frame(self.scrollable_content_region.width, self.rich_style)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        frame = self._frame or Frame(self.scrollable_content_region.width, self.rich_style)
        width, style = frame.width, frame.style
        index = int(self.scroll_y) + y
        if self.status and y == self.scrollable_content_region.height - 1:
            status = self.get_component_rich_style("live-output--status")
            return Strip([Segment(self.status, status)]).crop_extend(0, width, status)
        if index >= len(self._rows):
            return Strip.blank(width, style)
        key = self._rows[index]
        selection = self.text_selection
        span = selection.get_span(index) if selection is not None else None
        if span is None:
            return placed_row(self._cache, self._drawn, key, index, frame, self._row_strip)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._row_strip(*key, style)
        strip = strip.crop_extend(0, width, style)
        start, end = span
        end = key[2] - key[1] if end == -1 else end
        chosen = strip.crop(start, end).apply_style(self.screen.get_component_rich_style("screen--selection"))
        strip = Strip.join([strip.crop(0, start), chosen, strip.crop(end)])
        return strip.apply_offsets(0, index)  # where each cell is, for a mouse selection

    # -- mouse selection: the rows as drawn, so a selection copies what it covers -------------

    ALLOW_SELECT = True

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        rows = (self._lines[number - self._dropped][start:end] for number, start, end in self._rows)
        return selection.extract("\n".join(rows)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _row_strip(self, number: int, start: int, end: int, style: Style) -> Strip:
        if not self.search_text:
            return plain_row(self._lines, self._dropped, number, start, end, style)
        line = self._lines[number - self._dropped]
        match = self.get_component_rich_style("live-output--match")
        current = self.get_component_rich_style("live-output--current")
        segments, at = [], start
        for hit in re.finditer(re.escape(self.search_text), line, re.IGNORECASE):
            a, b = max(hit.start(), start), min(hit.end(), end)
            if a >= b:
                continue
            if a > at:
                segments.append(Segment(line[at:a], style))
            chosen = current if self._current == (number, hit.start()) else match
            segments.append(Segment(line[a:b], style + chosen))
            at = b
        if at < end:
            segments.append(Segment(line[at:end], style))
        return Strip(segments)

    def watch_work(self, work: str | None) -> None:
        self.border_title = f"output · {work}" if work else "output"
        if self.search_text:
            self._set_status(f"/{self.search_text}   n next  N previous  esc end")
