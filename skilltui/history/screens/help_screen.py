"""`?` in `skilltui review`: every key of the review app, from the same table as the README."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

KEY_WIDTH = 15


class ReviewHelpScreen(ModalScreen[None]):
    """The review app's key map; esc, ? or q close it. It scrolls when the terminal is short."""

    DEFAULT_CSS = """
    ReviewHelpScreen {
        align: center middle;
        background: $background 60%;
    }
    ReviewHelpScreen > VerticalScroll {
        width: 96;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        border-subtitle-color: $text-muted;
        background: $panel;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, keys: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        lines = [Content.styled("skilltui review keys", "$text-primary bold"), Content("")]
        lines += [Content.assemble((f"  {k:<{KEY_WIDTH}}", "$text-accent bold"), what) for k, what in self.keys]
        lines += [Content(""), Content.styled("esc or ? closes this help", "$foreground-muted")]
        with VerticalScroll() as scroll:
            scroll.border_subtitle = "↑↓ scroll"
            yield Static(Content("\n").join(lines), id="review-keymap")

    def action_close(self) -> None:
        self.dismiss(None)
