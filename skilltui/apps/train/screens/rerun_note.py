"""Asking for the optional note a rerun carries into the next backward attempt's prompt.

A rerun without a reason repeats the same mistake about as often as not; the note is how
a person steers the optimizer ("keep the dialogue note, drop the new one"). It is
optional: Enter on an empty line reruns without one.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from ...shared.screens.dialog import Dialog


class RerunNoteScreen(Dialog[str | None]):
    """Dismisses with the note (maybe empty) on Enter, or None on Escape (no rerun)."""

    DEFAULT_CSS = """
    RerunNoteScreen > Vertical {
        width: 80;
        max-width: 95%;
        border: thick $accent;
    }
    RerunNoteScreen #title { text-style: bold; }
    RerunNoteScreen #hint { color: $text-muted; margin-bottom: 1; }
    RerunNoteScreen Input > .input--placeholder { color: $foreground-muted; }  /* text: 4.5:1, like the rest */
    """

    BINDINGS = [Binding("escape", "cancel", "Back to the review")]

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Rerun {self.label}", id="title", markup=False)
            yield Static(
                "The pool goes back to the commit before this micro-step and the backward pass runs "
                "again. A note here goes into its prompt.",
                id="hint",
                markup=False,
            )
            yield Input(placeholder="optional note for the next attempt", id="note")
            yield Static("enter  rerun   ·   esc  back to the review", id="keys", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
