"""The apps' last line of defence: no control character from what they show reaches the terminal.

Agent text (a note, a commit message, a transcript's streamed words, an error quoting
them) is shown by many widgets, and Textual writes a string's escape sequences to the
terminal as they are: an OSC 52 in a note would write the user's clipboard, an OSC 0
retitle the window. The data layer spells such characters out where it can
(`core.safe_text.visible`); this guard makes it hold for every widget, present and future.
Every line Textual draws is a `Strip` of segments turned into terminal output by
`Strip.render`; the guard drops the control characters of each segment's text before
that (Rich counts them as no width, so the layout does not move). Control segments,
which are Textual's own cursor moves, pass as they are.

`install()` is called by each app before it runs (TrainingApp, HistoryApp); once is enough.
"""

from __future__ import annotations

from rich.console import Console
from rich.segment import Segment
from textual.strip import Strip

from ...core.safe_text import dropped

_GUARDED = "_skilltui_guarded"


def install() -> None:
    """Wrap `Strip.render` so a strip's text never carries a control character (idempotent)."""
    render = Strip.render
    if getattr(render, _GUARDED, False):
        return

    def guarded(self: Strip, console: Console) -> str:
        if self._render_cache is None and not all(control or text.isprintable() for text, _, control in self._segments):
            self._segments = [
                segment if segment.control else Segment(dropped(segment.text), segment.style, segment.control)
                for segment in self._segments
            ]
        return render(self, console)

    setattr(guarded, _GUARDED, True)
    Strip.render = guarded  # type: ignore[method-assign]
