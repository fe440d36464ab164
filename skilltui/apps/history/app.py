"""`skilltui review RUN`: the keyboard review app over a run's pool history, running or finished.

Run it on its own with `python -m skilltui review RUN`. It reads the run through
`records` and changes it only through `operations`, so everything it shows or does is
also available (and tested) without a terminal. Its keys are the `history` rows of
`components.keymap`, the table its screens bind and its help (`?`) and the docs show; a
key a person knows from the live app (`t`, `?`, `q`) does the same here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual.app import App, SystemCommand
from textual.screen import Screen

from ...store.run_folder import Run
from ..shared import keymap, terminal_guard, themes
from ..shared.palette import choose_theme, kept_textual_commands
from ..shared.screens.help import HelpScreen
from .screens.history import HistoryScreen


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
        terminal_guard.install()  # agent text never drives the terminal, whichever widget shows it
        super().__init__()
        self.own_themes: list[str] = []  # the palette's theme picker offers these
        self.run_folder = run
        self.poll = poll
        self.sub_title = run.id

    def on_mount(self) -> None:
        self._use_themes()
        self.push_screen(HistoryScreen(self.run_folder, self.poll))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen("skilltui review keys", ("history",)))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette offers what the keys do (search, revert, reset, dropped commits), and the own themes."""
        yield from kept_textual_commands(super().get_system_commands(screen))
        if isinstance(screen, HistoryScreen):
            entries = [
                ("Search commits", "messages and the notes each commit touched (/)", screen.action_search),
                ("Revert the selected commit", "a new inverse commit; asks first (u)", screen.action_revert),
                ("Reset the pool to the selected commit", "asks first (R)", screen.action_reset),
                ("Show dropped commits too", "reruns, roll backs, resets (a)", screen.action_toggle_all),
                ("Evidence of the selected commit", "what its micro-step acted on (e)", screen.action_evidence),
            ]
            yield from (SystemCommand(title, help, callback) for title, help, callback in entries)
        yield SystemCommand("Switch theme", "the dark, light and your own themes", partial(choose_theme, self))

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
        self.own_themes = sorted({theme.name for theme in loaded.themes})
        names = set(self.own_themes)
        wanted = themes.remembered_theme()
        chosen = wanted if wanted in names or wanted in self.available_themes else themes.DEFAULT_THEME
        if chosen in self.available_themes:
            self.theme = chosen
