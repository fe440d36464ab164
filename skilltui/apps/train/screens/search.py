"""Asking what to find in the Output pane (`/`), the way `less` and vim ask at the foot of the screen.

A one-line prompt docked at the bottom, so the output it searches stays in view above it.
Enter searches (an empty line keeps the search there was), escape leaves everything as it was.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class SearchScreen(ModalScreen[str | None]):
    """Dismisses with the text to find, or None on escape."""

    DEFAULT_CSS = """
    SearchScreen {
        align: left bottom;
        background: $background 0%;
    }
    SearchScreen > Horizontal {
        dock: bottom;
        height: 1;
        background: $panel;
    }
    SearchScreen #search-label {
        width: auto;
        padding: 0 0 0 1;
        color: $text-primary;
        text-style: bold;
    }
    SearchScreen Input {
        width: 1fr;
        border: none;
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    SearchScreen Input > .input--placeholder { color: $foreground-muted; }  /* text: 4.5:1, like the rest */
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, previous: str = "") -> None:
        super().__init__()
        self.previous = previous

    def compose(self) -> ComposeResult:
        # Labelled, as less's and vim's `/` are: the placeholder goes once a previous search fills the box.
        with Horizontal():
            yield Static("search output /", id="search-label", markup=False)
            yield Input(value=self.previous, placeholder="type, then enter (esc cancels)")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or self.previous or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
