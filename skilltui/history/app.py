"""`skilltui review RUN`: the keyboard review app over a run's pool history, running or finished.

    j/k, arrows   move                      enter   the selected commit's diff (n/N file, esc back)
    /             search messages and notes e       the evidence its micro-step acted on
    space, d      mark a commit, diff two   t       revert it with an inverse commit (asks y)
    a             show dropped commits too  g       reset the pool to it (asks y)
    q             quit

Run it on its own with `python -m skilltui review RUN`. It reads the run through
`records` and changes it only through `operations`, so everything it shows or does is
also available (and tested) without a terminal.
"""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from ..engine.run import Run
from .screens.history_screen import HistoryScreen


class ReviewApp(App):
    """One run's history. `poll` is how often (seconds) it looks for new commits; None never looks."""

    TITLE = "skilltui review"
    BINDINGS = [Binding("q", "quit", "Quit")]

    def __init__(self, run: Run, poll: float | None = 2.0) -> None:
        super().__init__()
        self.run_folder = run
        self.poll = poll
        self.sub_title = run.id

    def on_mount(self) -> None:
        self._use_themes()
        self.push_screen(HistoryScreen(self.run_folder, self.poll))

    def _use_themes(self) -> None:
        """The live-training app's themes, so both apps look alike; without them Textual's own theme."""
        try:
            from ..tui.themes import DEFAULT_THEME, load_themes, remembered_theme
        except ImportError:
            return
        try:
            loaded = load_themes()
        except Exception:  # noqa: BLE001 - a theme problem must never keep the review from opening
            return
        for theme in loaded.themes:
            self.register_theme(theme)
        names = {t.name for t in loaded.themes}
        wanted = remembered_theme()
        chosen = wanted if wanted in names or wanted in self.available_themes else DEFAULT_THEME
        if chosen in self.available_themes:
            self.theme = chosen
