"""The help screen: the key map, made from the same table as the docs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from ..keys import keymap_markdown


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        background: $background 60%;
    }
    HelpScreen > VerticalScroll {
        width: 96;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $panel;
        padding: 0 1;
    }
    HelpScreen Markdown { background: $panel; }
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(
                "## skilltui keys\n\nEvery micro-step waits for your review: **a** approves, "
                "**r** reruns, **u** rolls back.\n\n" + keymap_markdown()
            )

    def action_close(self) -> None:
        self.dismiss(None)
