"""The selected work's agent output, streamed as it arrives, with a bounded history.

The engine emits a `delta` for every piece of streamed text; redrawing per delta would
spend the event loop on the screen instead of the run. So the app folds deltas into a
bounded `OutputBuffer` per work and calls `catch_up()` on a timer: the log gets the new
text in one write, or reloads the whole buffer when it fell behind what the buffer keeps.
"""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Log

from ..state import OutputBuffer

MAX_LINES = 3000


class LiveOutput(Log):
    """A log that follows one work's `OutputBuffer`."""

    DEFAULT_CSS = """
    LiveOutput {
        background: $surface;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    """

    work: reactive[str | None] = reactive(None, init=False)

    def __init__(self, **kwargs) -> None:
        super().__init__(max_lines=MAX_LINES, highlight=False, auto_scroll=True, **kwargs)
        self._seen = 0
        self._buffer: OutputBuffer | None = None

    def follow(self, work: str | None, buffer: OutputBuffer | None) -> None:
        """Show `work`'s output from its buffer's start, and follow it from now on."""
        self._buffer = buffer
        self.work = work
        self.clear()
        self._seen = 0
        if buffer is not None:
            self._load(buffer.text())
            self._seen = buffer.total

    def _load(self, text: str) -> None:
        """Write a whole buffer at once: `write_lines` measures lines off the loop, `write` per line."""
        *complete, tail = text.split("\n")
        if complete:
            # A blank line would vanish in write_lines; a space keeps it, and looks the same.
            self.write_lines([line or " " for line in complete], scroll_end=True)
            self.write("\n", scroll_end=True)  # open the line the stream goes on writing into
        if tail:
            self.write(tail, scroll_end=True)

    def catch_up(self) -> None:
        """Write whatever the buffer gained since the last call."""
        buffer = self._buffer
        if buffer is None:
            return
        new = buffer.since(self._seen)
        if new is None:
            # The buffer dropped text this log never showed: start again from what it keeps.
            self.clear()
            self._load(buffer.text())
            self._seen = buffer.total
            return
        self._seen = buffer.total
        if new:
            # Follow the stream only while the person is at its end; reading back stays put.
            self.write(new, scroll_end=self.is_vertical_scroll_end or self.max_scroll_y == 0)

    def watch_work(self, work: str | None) -> None:
        self.border_title = f"output · {work}" if work else "output"
