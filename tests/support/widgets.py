"""One widget on its own screen, with skilltui's themes registered."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widget import Widget

from skilltui.components.themes import DEFAULT_THEME, load_themes


class Harness(App):
    """One widget on a screen, with skilltui's themes registered."""

    def __init__(self, widget: Widget, theme: str = DEFAULT_THEME) -> None:
        super().__init__()
        self.widget = widget
        self.wanted = theme

    def compose(self) -> ComposeResult:
        yield self.widget

    def on_mount(self) -> None:
        for theme in load_themes().themes:
            self.register_theme(theme)
        self.theme = self.wanted
