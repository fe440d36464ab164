"""A yes/no question that must be answered with `y`, for the two things that are hard to undo.

Rolling back a micro-step and quitting a run that is training both ask here first. The
answer is a key, not a button, because the app is keyboard first and a stray Enter must
not roll anything back.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from .dialog import Dialog


class ConfirmScreen(Dialog[bool]):
    """Dismisses with True on `y`, False on `n` or Escape."""

    DEFAULT_CSS = """
    ConfirmScreen #question { text-style: bold; }
    ConfirmScreen #detail { color: $text-muted; margin-top: 1; }
    ConfirmScreen #keys { text-style: bold; }
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, question: str, detail: str = "", yes: str = "y yes") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question", markup=False)
            if self.detail:
                yield Static(self.detail, id="detail", markup=False)
            yield Static(f"{self.yes}   ·   n / esc  no", id="keys", markup=False)

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
