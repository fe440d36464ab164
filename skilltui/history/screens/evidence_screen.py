"""The evidence a micro-step acted on (its summary and loss reports), rendered as markdown; esc goes back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Markdown


class EvidenceScreen(Screen):
    """Why a commit exists: the reports the backward agent read before it edited the notes."""

    DEFAULT_CSS = """
    EvidenceScreen > VerticalScroll {
        border: round $secondary;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("j", "scroll(1)", "Down", show=False),
        Binding("k", "scroll(-1)", "Up", show=False),
    ]

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="evidence"):
            yield Markdown(self.markdown)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#evidence", VerticalScroll).focus()

    def action_scroll(self, lines: int) -> None:
        self.query_one("#evidence", VerticalScroll).scroll_relative(y=lines, animate=False)
