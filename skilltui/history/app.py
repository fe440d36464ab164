"""`skilltui review RUN`: the keyboard review app over a run's pool history, running or finished.

Run it on its own with `python -m skilltui review RUN`. It reads the run through
`records` and changes it only through `operations`, so everything it shows or does is
also available (and tested) without a terminal. Its keys are the `history` rows of
`components.keymap`, the table its screens bind and its help (`?`) and the README show; a
key a person knows from the live app (`t`, `?`, `q`) does the same here.
"""

from __future__ import annotations

from textual.app import App

from ..components import keymap, themes
from ..components.help import HelpScreen
from ..engine.run import Run
from .screens.history_screen import HistoryScreen


class HistoryApp(App):
    """One run's history. `poll` is how often (seconds) it looks for new commits; None never looks."""

    TITLE = "skilltui review"
    # Textual's footer draws the palette key's separator in 20% foreground, under 2:1 in both
    # themes; the themes' separator colour keeps it at 3:1 (tests/test_tui_contrast.py).
    CSS = """
    Footer FooterKey.-command-palette { border-left: vkey $panel-lighten-2; }
    """
    BINDINGS = keymap.bindings("review app")

    def __init__(self, run: Run, poll: float | None = 2.0) -> None:
        super().__init__()
        self.run_folder = run
        self.poll = poll
        self.sub_title = run.id

    def on_mount(self) -> None:
        self._use_themes()
        self.push_screen(HistoryScreen(self.run_folder, self.poll))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen("skilltui review keys", ("history",)))

    def action_toggle_theme(self) -> None:
        """The live app's `t`: its dark and light themes, remembered for the next start of either app."""
        wanted = themes.LIGHT_THEME if self.current_theme.dark else themes.DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
            themes.remember_theme(wanted)

    def _use_themes(self) -> None:
        """The live-training app's themes, so both apps look alike; with a broken theme file, Textual's own."""
        try:
            loaded = themes.load_themes()
        except Exception:  # noqa: BLE001 - a theme problem must never keep the review from opening
            return
        for theme in loaded.themes:
            self.register_theme(theme)
        names = {t.name for t in loaded.themes}
        wanted = themes.remembered_theme()
        chosen = wanted if wanted in names or wanted in self.available_themes else themes.DEFAULT_THEME
        if chosen in self.available_themes:
            self.theme = chosen
