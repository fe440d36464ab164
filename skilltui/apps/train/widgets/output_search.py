"""The output pane's search: `/` asks for a text, its matches are highlighted, `n` / `N` walk them.

A part of `LiveOutput` (mixed in before its scroll view), kept apart so the pane's module
holds how text streams in and is drawn. It reads the pane's logical lines and wrapped rows
(`_lines`, `_rows`, `_dropped`) and draws through the pane's row strips, which highlight
`search_text` and the `_current` match.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING

from ..screens.search import SearchScreen

if TYPE_CHECKING:
    from .steady_scrollbar import SteadyScrollView as Base
else:
    Base = object


class OutputSearch(Base):
    """`/`, `n`, `N` and `esc` over the output pane."""

    if TYPE_CHECKING:  # what it reads of the pane (LiveOutput) it is mixed into
        _lines: list[str]
        _rows: list[tuple[int, int, int]]
        _dropped: int
        _following: bool
        _current: tuple[int, int] | None
        search_text: str
        status: str

        def _forget(self, kept: bool = True) -> None: ...

        def _size_rows(self) -> None: ...

    def matches(self) -> list[tuple[int, int]]:
        """Every match of the query: (line number, offset), in reading order."""
        if not self.search_text:
            return []
        find = re.compile(re.escape(self.search_text), re.IGNORECASE).finditer
        return [(self._dropped + index, hit.start()) for index, line in enumerate(self._lines) for hit in find(line)]

    def search(self, query: str) -> int:
        """Highlight `query` and go to its first match from the top of the view; the number of matches."""
        self.search_text = query
        self.refresh_bindings()
        self._current = None
        self._forget()
        found = self.matches()
        if found:
            self._current = None
            self.action_next_match(1)
        self.refresh()
        return len(found)

    def _row_of(self, match: tuple[int, int]) -> int:
        return max(0, bisect_right(self._rows, (match[0], match[1], 1 << 60)) - 1)

    def action_next_match(self, direction: int) -> None:
        """`n` / `N`: the next or previous match from the current one, or from the view if it moved away."""
        found = self.matches()
        if not found:
            self.notify(f"No match for {self.search_text!r}" if self.search_text else "Press / to search the output")
            return
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height
        current = self._current
        if current is None or not top <= self._row_of(current) < top + height:
            # The person scrolled away from the match (or there is none yet): start from the view.
            first = self._rows[top][:2] if top < len(self._rows) else (0, 0)
            current = (first[0], first[1] - 1) if direction > 0 else first
        if direction > 0:
            later = [m for m in found if m > current]
            target = later[0] if later else found[0]
            if not later and self._current is not None:
                self.notify("Search went on from the top", timeout=2)
        else:
            earlier = [m for m in found if m < current]
            target = earlier[-1] if earlier else found[-1]
            if not earlier:
                self.notify("Search went on from the bottom", timeout=2)
        self._go_to(target, found)

    def _go_to(self, match: tuple[int, int], found: list[tuple[int, int]]) -> None:
        self._current = match
        self._forget(kept=False)
        row = self._row_of(match)
        self._following = False
        self.scroll_to(y=max(0, row - self.scrollable_content_region.height // 3), animate=False, immediate=True)
        self._following = row >= len(self._rows) - 1 and self.scroll_y >= self.max_scroll_y
        self.refresh()
        where = f"match {found.index(match) + 1} of {len(found)}"
        self._set_status(f"/{self.search_text}  {where}   n next  N previous  esc end")

    def _set_status(self, status: str) -> None:
        self.status = status
        self._size_rows()
        self.refresh()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """n, N and esc belong to a search: without one they are neither shown in the footer nor taken."""
        if action in ("next_match", "end_search"):
            return bool(self.search_text)
        return True

    def action_end_search(self) -> None:
        self.search_text, self._current, self.status = "", None, ""
        self._forget()
        self._size_rows()
        self.refresh()
        self.refresh_bindings()

    def ask_search(self) -> None:
        """`/`: ask for what to find, then highlight it here and give this pane the keys n / N."""

        def found(query: str | None) -> None:
            if query:
                count = self.search(query)
                self.focus()
                if not count:
                    self._set_status(f"/{query}  no match   esc end")

        self.app.push_screen(SearchScreen(self.search_text), found)
