"""`skilltui review RUN`: the keyboard review app over a run's pool history, running or finished.

Run it on its own with `python -m skilltui review RUN`. It reads the run through
`records` and changes it only through `operations`, so everything it shows or does is
also available (and tested) without a terminal. Its keys are `REVIEW_KEYS`, the table the
help screen (`?`) and the README show; a key a person knows from the live app (`t`, `?`,
`q`) does the same here.
"""

from __future__ import annotations

from textual.app import App

from ..components import app_keys
from ..run_model.reading import Run
from .screens.help_screen import ReviewHelpScreen
from .screens.history_screen import HistoryScreen

# (keys, what they do): what `?` shows and the README's table; a test checks each is bound.
REVIEW_KEYS: tuple[tuple[str, str], ...] = (
    ("j / k, arrows", "move through the commits"),
    ("g g / G", "the newest / the oldest commit"),
    ("enter", "the selected commit's diff (n / N next and previous note, esc back)"),
    ("e", "the evidence its micro-step acted on: loss reports, summary, reads"),
    ("/", "search commit messages and the notes they touched (esc clears)"),
    ("space, d", "mark a commit, then diff it against the selected one"),
    ("a", "show dropped commits too (reruns, roll backs, resets)"),
    ("u", "revert the selected commit with an inverse commit (asks y)"),
    ("R", "reset the pool to the selected commit; the old head stays kept (asks y)"),
    ("t", "switch between the dark and the light theme"),
    ("?", "this help"),
    ("q", "quit"),
)


class ReviewApp(App):
    """One run's history. `poll` is how often (seconds) it looks for new commits; None never looks."""

    TITLE = "skilltui review"
    # Textual's footer draws the palette key's separator in 20% foreground, under 2:1 in both
    # themes; the themes' separator colour keeps it at 3:1 (tests/test_tui_contrast.py).
    CSS = """
    Footer FooterKey.-command-palette { border-left: vkey $panel-lighten-2; }
    """
    BINDINGS = [app_keys.QUIT, app_keys.HELP, app_keys.THEME]

    def __init__(self, run: Run, poll: float | None = 2.0) -> None:
        super().__init__()
        self.run_folder = run
        self.poll = poll
        self.sub_title = run.id

    def on_mount(self) -> None:
        self._use_themes()
        self.push_screen(HistoryScreen(self.run_folder, self.poll))

    def action_help(self) -> None:
        if not isinstance(self.screen, ReviewHelpScreen):
            self.push_screen(ReviewHelpScreen(REVIEW_KEYS))

    def action_toggle_theme(self) -> None:
        """The live app's `t`: its dark and light themes, remembered for the next start of either app."""
        try:
            from ..tui import themes
        except ImportError:
            return
        wanted = themes.LIGHT_THEME if self.current_theme.dark else themes.DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
            themes.remember_theme(wanted)

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
