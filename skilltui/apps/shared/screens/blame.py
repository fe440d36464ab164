"""`b` on a note in a diff: every line of the note at HEAD with the micro-step that last changed it.

The same lines as `skilltui blame RUN NOTE` (`runs.blame`), so the terminal command and the
history browser cannot tell a line's origin two ways.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ....runs.blame import Blame, blame_text


class BlameScreen(Screen):
    DEFAULT_CSS = """
    BlameScreen > #blame-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    BlameScreen > VerticalScroll { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, result: Blame) -> None:
        super().__init__()
        self.result = result

    def compose(self) -> ComposeResult:
        yield Static(Text(f"blame {self.result.note} at HEAD   esc: back"), id="blame-title")
        with VerticalScroll():
            yield Static(Text("\n".join(blame_text(self.result))), id="blame-lines")
        yield Footer()
