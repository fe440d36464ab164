"""A scrollbar that repaints only when what it draws changes.

The output pane follows many streaming works, and every write moves its scroll position and
its length, which repaints Textual's scrollbar through Rich's render path, in many of the
stream's frames and in every key that switches works (figures: docs/benchmarks.md, "The
app's frames"). Yet with thousands of lines in the pane the thumb is one cell at the bottom,
and nearly none of those repaints would change a cell. `SteadyScrollBar` works out the thumb as Textual draws it
(in eighths of a cell) and, when a repaint would draw a bar it drew before, gives the lines
it drew then. It keeps the last `KEPT_LOOKS` bars: a person going back and forth between two
works swaps the pane between two thumbs, and with one bar kept every such key would repaint
it. The works table uses it too, so its bar is not repainted with every row that changes.
"""

from __future__ import annotations

from math import ceil

from textual.cache import LRUCache
from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

EIGHTHS = 8  # Textual draws a thumb's ends in eighths of a cell
KEPT_LOOKS = 8  # bars kept by what they draw: a few works' thumbs, each a column of a few dozen cells


class SteadyScrollBar(ScrollBar):
    """Textual's scrollbar, drawn afresh only for a thumb, size, state and colours it has not kept."""

    _kept: LRUCache[tuple[object, ...], list[Strip]] | None = None

    def _look(self) -> tuple[object, ...]:
        """What the bar draws: the same tuple, the same cells (`ScrollBarRender.render_bar`)."""
        size = self.size.height if self.vertical else self.size.width
        virtual = ceil(self.window_virtual_size)
        window = ceil(self.window_size) if self.window_size < self.window_virtual_size else 0
        thumb = None
        if window and size and virtual and size != virtual:
            length = max(1, window / (virtual / size))
            start = int((size - length) * (self.position / (virtual - window)) * EIGHTHS)
            thumb = (start, start + ceil(length * EIGHTHS))
        styles = self.parent.styles if isinstance(self.parent, Widget) else None
        colours = (styles.scrollbar_color, styles.scrollbar_background) if styles is not None else None
        return (self.size, thumb, self.grabbed is not None, self.mouse_over, colours, self.app.theme)

    def render_lines(self, crop: Region) -> list[Strip]:
        # Decided here, not in `refresh`: a write sets the bar's length before its position,
        # and the bar in between (never drawn) would look moved.
        if self._kept is None:
            self._kept = LRUCache(KEPT_LOOKS)
        drawn = (self._look(), crop)
        lines = self._kept.get(drawn)
        if lines is None:
            lines = self._kept[drawn] = super().render_lines(crop)
        return lines


class SteadyScrollView(ScrollView):
    """A scroll view whose vertical scrollbar is a `SteadyScrollBar`."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        # Textual 8's own property (pinned), with the steady bar in place of its ScrollBar.
        if self._vertical_scrollbar is None:
            bar = SteadyScrollBar(vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar
