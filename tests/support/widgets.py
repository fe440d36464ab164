"""One widget on its own screen, with skilltui's themes registered."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widget import Widget

from skilltui.apps.shared.themes import DEFAULT_THEME, load_themes


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


def painted_lines(widget: Widget) -> list[int]:
    """The lines (y, from the widget's top) that Textual renders for `widget` from now on, in order.

    Textual repaints a widget's dirty lines through its styles cache; a line that did not
    change is taken from that cache and never reaches `render_line` (Textual 8.2, pinned).
    """
    painted: list[int] = []
    render_line = widget._styles_cache.render_line

    def counting(*args, **kwargs):
        painted.append(args[1])
        return render_line(*args, **kwargs)

    widget._styles_cache.render_line = counting
    return painted
