"""A loss or commonality report, rendered as markdown.

The loss report is the judge's reading of one work-step and the evidence the backward pass
acts on, so a person reads the same text the optimizer read. The view takes the report's
text; where it came from (a live run, a finished one, a review request) is the caller's
business.

It draws with Rich's markdown inside one `Static` rather than with Textual's `Markdown`
widget, which mounts a widget per paragraph, list item and table cell: a review screen with
a group's reports mounted hundreds of widgets each time, and tearing them down again held
up the key that approved it.
"""

from __future__ import annotations

from typing import Unpack

from rich.markdown import Markdown as RichMarkdown
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from ..themes import use_markdown_colours
from . import WidgetOptions


def rendered(text: str) -> RichMarkdown:
    return RichMarkdown(text, code_theme="ansi_dark", hyperlinks=False)


class ReportView(VerticalScroll, can_focus=True):
    """Markdown text under a title; `show()` replaces both, and does nothing when neither changed."""

    DEFAULT_CSS = """
    ReportView {
        background: $surface;
        padding: 0 1;
    }
    ReportView > Static {
        width: 1fr;
        background: $surface;
    }
    """

    title: reactive[str] = reactive("")

    def __init__(self, text: str = "", *, title: str = "", **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._text = text
        self.set_reactive(ReportView.title, title)

    @property
    def text(self) -> str:
        return self._text

    def compose(self) -> ComposeResult:
        yield Static(rendered(self._text), id="report-body")

    def on_mount(self) -> None:
        self._theme_changed()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, *_: object) -> None:
        use_markdown_colours(self.app)
        self._draw()

    def _draw(self) -> None:
        # The body is absent while the app tears the screen down (a mount can still be
        # delivered then, seen under load): nothing to draw, and compose draws the text anew.
        body = self.query_one_optional("#report-body", Static)
        if body is not None:
            body.update(rendered(self._text))

    def watch_title(self, title: str) -> None:
        self.border_title = title or None

    def show(self, text: str, title: str | None = None) -> None:
        if title is not None:
            self.title = title
        if text == self._text:
            return
        self._text = text
        self._draw()
        self.scroll_home(animate=False)
