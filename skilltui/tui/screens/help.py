"""The help screen: the key map, made from the same table as the docs.

Plain two-column lines rather than a markdown table, so the whole map fits on a 100x30
terminal without scrolling.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import KEYMAP

KEY_WIDTH = 11


def keymap_content() -> Content:
    lines: list[Content] = [
        Content.styled("skilltui keys", "$text-primary bold"),
        Content("Every micro-step waits for your review: a approves, r reruns, u rolls back."),
    ]
    for screen, title in (("main", "Main screen"), ("review", "Review screen")):
        lines += [Content(""), Content.styled(title, "bold underline")]
        for where, keys, what in KEYMAP:
            if where == screen:
                lines.append(Content.assemble((f"  {keys:<{KEY_WIDTH}}", "$text-accent bold"), what))
    lines += [Content(""), Content.styled("esc or ? closes this help", "$foreground-muted")]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        background: $background 60%;
    }
    HelpScreen > VerticalScroll {
        width: 100;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $panel;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(keymap_content(), id="keymap")

    def action_close(self) -> None:
        self.dismiss(None)
