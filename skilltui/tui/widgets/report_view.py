"""A loss or commonality report, rendered as markdown.

The loss report is the judge's reading of one work-step and the evidence the backward pass
acts on, so a person reads the same text the optimizer read. The view takes the report's
text; where it came from (a live run, a finished one, a review request) is the caller's
business.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Markdown


class ReportView(VerticalScroll, can_focus=True):
    """Markdown text under a title; `show()` replaces both, and does nothing when neither changed."""

    DEFAULT_CSS = """
    ReportView {
        background: $surface;
        padding: 0 1;
    }
    ReportView > Markdown {
        background: $surface;
        margin: 0;
        padding: 0;
    }
    """

    title: reactive[str] = reactive("")

    def __init__(self, text: str = "", *, title: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self._text = text
        self.set_reactive(ReportView.title, title)

    @property
    def text(self) -> str:
        return self._text

    def compose(self) -> ComposeResult:
        yield Markdown(self._text, open_links=False)

    def watch_title(self, title: str) -> None:
        self.border_title = title or None

    def show(self, text: str, title: str | None = None) -> None:
        if title is not None:
            self.title = title
        if text == self._text:
            return
        self._text = text
        self.query_one(Markdown).update(text)
        self.scroll_home(animate=False)
