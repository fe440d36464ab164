"""A full-screen diff, file by file: what `enter` (one commit) and `d` (two marked commits) open."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..widgets.diff_view import DiffView


class DiffScreen(Screen):
    """n / N step through the files the diff touches; esc goes back to the list where you were."""

    DEFAULT_CSS = """
    DiffScreen > #diff-title {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-style: bold;
    }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("n", "next_file", "Next file"),
        Binding("N", "previous_file", "Previous file"),
        Binding("j", "scroll(1)", "Down", show=False),
        Binding("k", "scroll(-1)", "Up", show=False),
    ]

    def __init__(self, title: str, patch: str, empty: str = "this diff changes no note") -> None:
        super().__init__()
        self.title_text = title
        self.patch = patch
        self.empty = empty

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text), id="diff-title")
        yield DiffView(self.patch, self.empty, id="diff")
        yield Footer()

    @property
    def view(self) -> DiffView:
        return self.query_one(DiffView)

    def on_mount(self) -> None:
        self.view.focus()

    def action_next_file(self) -> None:
        self.view.show_file(self.view.index + 1)

    def action_previous_file(self) -> None:
        self.view.show_file(self.view.index - 1)

    def action_scroll(self, lines: int) -> None:
        self.view.scroll_relative(y=lines, animate=False)
