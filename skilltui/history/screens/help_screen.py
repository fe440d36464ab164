"""`?` in `skilltui review`: every key of the review app, from the same table as the README.

It is the live app's help dialog (same frame, same keys to close it) with the review app's
table in it, so `?` looks and closes the same in both apps.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from ...tui.screens.help import HelpScreen

KEY_WIDTH = 15


class ReviewHelpScreen(HelpScreen):
    """The review app's key map; esc, ? or q close it, and it scrolls when the terminal is short."""

    def __init__(self, keys: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self.keys = keys

    def body(self) -> ComposeResult:
        # The frame, its scrolling and its foot ("esc or ? closes", "more below") are HelpScreen's.
        lines = [Content.styled("skilltui review keys", "$text-primary bold"), Content("")]
        lines += [Content.assemble((f"  {k:<{KEY_WIDTH}}", "$text-accent bold"), what) for k, what in self.keys]
        yield Static(Content("\n").join(lines), id="review-keymap")
