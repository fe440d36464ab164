"""The evidence a micro-step acted on (its summary and loss reports), rendered as markdown; esc goes back.

The markdown is drawn by the live-training app's `ReportView`, the same view its review
screen shows reports in, so a reviewer reads the evidence the same way live and after.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from ...shared.widgets.report_view import ReportView


class EvidenceScreen(Screen):
    """Why a commit exists: the reports the backward agent read before it edited the notes."""

    DEFAULT_CSS = """
    EvidenceScreen > ReportView {
        height: 1fr;
        border: round $secondary;
    }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("j", "scroll(1)", "Down", show=False),
        Binding("k", "scroll(-1)", "Up", show=False),
    ]

    def __init__(self, markdown: str, title: str = "evidence") -> None:
        super().__init__()
        self.markdown = markdown
        self.title_text = title

    def compose(self) -> ComposeResult:
        yield ReportView(self.markdown, title=self.title_text, id="evidence")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ReportView).focus()

    def action_scroll(self, lines: int) -> None:
        self.query_one(ReportView).scroll_relative(y=lines, animate=False)
