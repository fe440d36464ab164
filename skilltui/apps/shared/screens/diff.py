"""A full-screen diff, file by file: what `enter` (one commit) and `d` (two marked commits) open.

The patch is drawn by the shared `DiffView` (one bordered block per note), so a diff
reads the same in both apps; this screen adds the lazygit/tig keys on top:
`n` / `N` jump to the next and previous note, `e` opens the note on view in $EDITOR (a
hand commit of the pool at HEAD), `b` shows who wrote each of its lines (`skilltui blame`), `esc` goes back to the list.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from ....core.errors import UsageError
from ....pool.repo import split_patch
from ....runs.blame import blame
from ....store.run_folder import Run
from ..editor import edit_note_by_hand
from ..widgets.diff_view import DiffView
from .blame import BlameScreen


class DiffScreen(Screen):
    """One patch; the line under the title says which file the view is on."""

    DEFAULT_CSS = """
    DiffScreen > #diff-title {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-style: bold;
    }
    DiffScreen > #diff-position {
        height: 1;
        padding: 0 1;
        color: $text-accent;
    }
    DiffScreen > DiffView {
        height: 1fr;
    }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        # Short words, so the footer keeps the app's quit and help keys in sight at 80 columns.
        Binding("n", "next_file", "Next file"),
        Binding("N", "previous_file", "Prev file"),
        Binding("e", "edit", "Edit"),
        Binding("b", "blame", "Blame"),
        Binding("j", "scroll(1)", "Down", show=False),
        Binding("k", "scroll(-1)", "Up", show=False),
    ]

    def __init__(
        self, title: str, patch: str, empty: str = "this diff changes no note", run: Run | None = None
    ) -> None:
        super().__init__()
        self.run = run  # with a run, `e` edits the note on view as the pool's HEAD has it
        self.title_text = title
        self.patch = patch
        self.empty = empty
        self.files = split_patch(patch)
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text), id="diff-title")
        yield Static(id="diff-position")
        yield DiffView(self.patch, empty_text=self.empty, id="diff")
        yield Footer()

    @property
    def view(self) -> DiffView:
        return self.query_one(DiffView)

    @property
    def position(self) -> str:
        if not self.files:
            return "no files"
        current = self.files[self.index]
        counts = f"+{current.added} -{current.removed}"
        return (
            f"file {self.index + 1}/{len(self.files)}: {current.path} ({current.status}, {counts})   n/N: next/previous"
        )

    def on_mount(self) -> None:
        self.view.focus()
        self.query_one("#diff-position", Static).update(Text(self.position))

    def show_file(self, index: int) -> None:
        """Bring file `index` (wrapping around) to the top of the view."""
        if not self.files:
            return
        self.index = index % len(self.files)
        blocks = list(self.view.query(".diff-file"))
        if self.index < len(blocks):
            self.view.scroll_to_widget(blocks[self.index], top=True, animate=False)
        self.query_one("#diff-position", Static).update(Text(self.position))

    def action_next_file(self) -> None:
        self.show_file(self.index + 1)

    def action_previous_file(self) -> None:
        self.show_file(self.index - 1)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.run is not None and bool(self.files) if action in ("edit", "blame") else True

    def action_edit(self) -> None:
        if self.run is not None and self.files:
            edit_note_by_hand(self.app, self.run, self.files[self.index].path)

    def action_blame(self) -> None:
        if self.run is None or not self.files:
            return
        try:
            result = blame(self.run, self.files[self.index].path)
        except UsageError as exc:
            self.notify(str(exc), severity="warning", timeout=6)
            return
        self.app.push_screen(BlameScreen(result))

    def action_scroll(self, lines: int) -> None:
        self.view.scroll_relative(y=lines, animate=False)
