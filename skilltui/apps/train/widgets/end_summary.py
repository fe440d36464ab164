"""The end summary under the header once a run ended, and the key (`z`) that folds it to its first line.

At 80x24 the whole summary (how the run ended, loss first to last step, notes, cost, next
commands) takes a third of the screen, and the loss curve and the panes are what a person
reads next; folded, it keeps its first line (how the run ended) and says how to unfold it.
"""

from __future__ import annotations

from typing import Unpack

from textual.widgets import Static

from ....model.summary import summarise
from ....model.view import RunView
from ...shared.widgets import WidgetOptions

FOLD_KEY = "z"


class EndSummary(Static):
    """The summary's lines, whole or folded to the first; `show(lines)` sets them, `toggle()` folds."""

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(markup=False, **kwargs)
        self.lines: list[str] = []
        self.folded = False

    def show(self, lines: list[str]) -> None:
        self.lines = list(lines)
        self._draw()
        self.display = True

    def hide(self) -> None:
        self.display = False

    def follow(self, view: RunView) -> None:
        """The run's summary once it ended; hidden while a session, a resumed one too, trains."""
        if view.active or view.ended is None:
            self.hide()
        else:
            self.show(summarise(view).lines())

    def toggle(self) -> None:
        self.folded = not self.folded
        self._draw()

    def _draw(self) -> None:
        if self.folded and len(self.lines) > 1:
            self.update(f"{self.lines[0]}  ({FOLD_KEY}: the whole summary)")
        else:
            self.update("\n".join(self.lines))
