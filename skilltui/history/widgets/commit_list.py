"""The commit list: every commit of the pool, newest first, one row each, keyboard driven."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from ..records import Commit

COLUMNS: list[tuple[str, str, int]] = [
    ("mark", " ", 1),
    ("sha", "commit", 7),
    ("subject", "subject", 26),
    ("micro", "micro-step", 11),
    ("decision", "decision", 20),
    ("loss", "loss", 11),
    ("notes", "notes touched", 24),
]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def loss_text(commit: Commit) -> str:
    if commit.loss_before is None and commit.loss_after is None:
        return ""
    before = f"{commit.loss_before:.3f}" if commit.loss_before is not None else "?"
    after = f"{commit.loss_after:.3f}" if commit.loss_after is not None else "…"
    return f"{before}→{after}"


def notes_text(commit: Commit) -> str:
    if not commit.files:
        return "(no note changed)"
    status, first = commit.files[0]
    more = f" +{len(commit.files) - 1}" if len(commit.files) > 1 else ""
    return ("-" if status == "D" else "") + first + more


class CommitList(DataTable):
    """The pool's history as a table; the screen owns what happens on each key.

    Only movement is handled here (j/k beside the arrows, as in lazygit and tig). The keys
    that act on a commit are bound to the screen's actions, but live on this widget so
    they work only while the list has focus and never while the search box takes text.
    """

    DEFAULT_CSS = """
    CommitList {
        height: 1fr;
        border: round $primary 50%;
    }
    CommitList:focus {
        border: round $primary;
    }
    """

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("home", "scroll_top", "First", show=False),
        Binding("end,G", "scroll_bottom", "Last", show=False),
        Binding("enter", "screen.open_diff", "Diff"),
        Binding("e", "screen.evidence", "Evidence"),
        Binding("space", "screen.mark", "Mark"),
        Binding("d", "screen.diff_marked", "Diff marked"),
        Binding("slash", "screen.search", "Search"),
        Binding("t", "screen.revert", "Revert"),
        Binding("g", "screen.reset", "Reset to"),
        Binding("a", "screen.toggle_all", "Dropped too"),
        Binding("escape", "screen.clear_search", "Clear search", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.shown: list[Commit] = []

    def on_mount(self) -> None:
        for key, label, width in COLUMNS:
            self.add_column(label, key=key, width=width)

    def show(self, commits: list[Commit], head: str, marked: str | None, select: str | None) -> None:
        """Replace the rows; keep the cursor on `select` when it is still shown, else on the first row."""
        self.clear()
        self.shown = list(commits)
        for commit in commits:
            style = "" if commit.in_history else "dim"
            # Readable without colour too: ● marked for d, @ the pool's HEAD, × dropped from the history.
            mark = "●" if commit.sha == marked else ("@" if commit.sha == head else ("×" if style else " "))
            cells = [
                Text(mark, style="bold yellow" if commit.sha == marked else style),
                Text(commit.short, style=style or "bold"),
                Text(_cut(commit.subject, COLUMNS[2][2]), style=style),
                Text(commit.micro.short_label if commit.micro else "", style=style),
                Text(_cut(commit.decision, COLUMNS[4][2]), style=style),
                Text(loss_text(commit), style=style),
                Text(_cut(notes_text(commit), COLUMNS[6][2]), style=style),
            ]
            self.add_row(*cells, key=commit.sha)
        index = next((i for i, c in enumerate(commits) if c.sha == select), 0)
        if commits:
            self.move_cursor(row=index, animate=False, scroll=True)

    @property
    def selected(self) -> Commit | None:
        if not self.shown or not 0 <= self.cursor_row < len(self.shown):
            return None
        return self.shown[self.cursor_row]
