"""The pool's commits, newest first, one line each: the list both apps walk the history with.

`git log` of the pool is the parameter history; this list is how a person walks it, in the
live app's Commits tab and in `skilltui review`. It takes `Commit` records and nothing else.
Columns fit the width they get: the subject takes what the fixed columns leave and is cut
with an ellipsis, never wrapped. With `detailed` (the history app) it adds the micro-step,
what the decision led to, and the notes touched.

While the newest commit is highlighted the list follows new commits as they land; once a
person picks an older one, it stays put. `j`/`k` move, `g g` goes to the top and `G` to the
bottom, as in vim, lazygit and tig.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.events import Key, Resize
from textual.message import Message
from textual.widgets import DataTable

from ..commits import Commit

SCROLLBAR = 2
GG_SECONDS = 1.0


def cut(text: str, width: int) -> str:
    """`text` on one line of at most `width` cells, an ellipsis where it was cut."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def notes_text(commit: Commit) -> str:
    if not commit.files:
        return "(no note changed)"
    status, first = commit.files[0]
    more = f" +{len(commit.files) - 1}" if len(commit.files) > 1 else ""
    return ("-" if status == "D" else "") + first + more


def review_text(commit: Commit, wide: bool) -> str:
    """The sign and, as room allows, the words of how the commit was decided ('✓ approved by auto')."""
    mark = commit.mark
    if mark is not None and mark.decision == "pending":
        # Narrow, the words go in front of the subject instead (see `_cells`).
        return f"{mark.sign} awaiting review" if wide else mark.sign
    words = commit.decision or (mark.words if mark else "")
    if not wide and mark is not None:
        words = mark.by or words
    return f"{mark.sign} {words}" if mark is not None else words


class CommitList(DataTable):
    """Commits of the pool; highlighting one posts `CommitList.CommitChosen`."""

    DEFAULT_CSS = """
    CommitList {
        height: 1fr;
        background: $surface;
    }
    """

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "go_top", "Top (g g)", show=False),
        Binding("home", "scroll_top", "First", show=False),
        Binding("end,G", "scroll_bottom", "Last", show=False),
        Binding("enter", "open", "Open", show=False),
    ]

    class CommitChosen(Message):
        """The person highlighted a commit; its diff or detail should be shown."""

        def __init__(self, commit: Commit) -> None:
            super().__init__()
            self.commit = commit

    class Opened(CommitChosen):
        """The person pressed enter on a commit: open it whole (the history app shows its diff)."""

    def __init__(self, *, detailed: bool = False, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True, show_header=detailed)
        self.detailed = detailed
        self.shown: list[Commit] = []
        self.head = ""
        self.marked: str | None = None
        self._drawn: tuple[object, ...] = ()
        self._g_armed = False

    @property
    def commits(self) -> list[Commit]:
        return list(self.shown)

    @property
    def selected(self) -> Commit | None:
        if not self.shown or not 0 <= self.cursor_row < len(self.shown):
            return None
        return self.shown[self.cursor_row]

    chosen = selected

    def show(self, commits: list[Commit], head: str = "", marked: str | None = None, select: str | None = None) -> None:
        """Replace the rows. With `select`, the cursor goes to that commit (the first row when it
        is not shown); without, it stays on the commit it was on, or follows the newest from the top."""
        before = self.selected
        if select is None and before is not None and self.cursor_row != 0:
            select = before.sha
        self.shown, self.head, self.marked = list(commits), head or (commits[0].sha if commits else ""), marked
        self._draw(select)
        after = self.selected
        if after is not None and (before is None or after.sha != before.sha):
            self.post_message(self.CommitChosen(after))

    def _draw(self, select: str | None) -> None:
        width = self.size.width
        key = (
            width,
            self.head,
            self.marked,
            [(c.sha, c.mark, c.decision, c.in_history, c.outcome) for c in self.shown],
        )
        index = next((i for i, c in enumerate(self.shown) if c.sha == select), 0)
        if key == self._drawn:
            if self.shown and index != self.cursor_row:
                self.move_cursor(row=index, animate=False, scroll=True)
            return
        self._drawn = key
        self.clear(columns=True)
        columns = self._columns(width)
        for name, size in columns:
            self.add_column(name, width=size, key=name)
        sizes = dict(columns)
        for commit in self.shown:
            self.add_row(*self._cells(commit, sizes), key=commit.sha)
        if self.shown:
            self.move_cursor(row=index, animate=False, scroll=True)

    def _columns(self, width: int) -> list[tuple[str, int]]:
        """(title, width) of each column for a list `width` cells wide; the subject takes the rest."""
        wide = width >= 110 and self.detailed
        review = max((len(review_text(c, wide)) for c in self.shown), default=0)
        fixed = [("", 1), ("commit", 7), ("decision", max(min(review, 20 if wide else 17), 8 if self.detailed else 1))]
        if self.detailed:
            fixed += [("micro-step", 10), ("loss", 13 if wide else 12)]
        flexible = ["subject", "notes"] if self.detailed else ["subject"]
        count = len(fixed) + len(flexible)
        rest = max(width - SCROLLBAR - 2 * count - sum(size for _, size in fixed), 8 * len(flexible))
        sizes = dict(fixed)
        if not self.detailed:
            return [*fixed, ("subject", rest)]
        notes = min(max(rest * 2 // 5, 8), 32)
        order = ["", "commit", "subject", "micro-step", "decision", "loss", "notes"]
        sizes |= {"subject": rest - notes, "notes": notes}
        return [(name, sizes[name]) for name in order]

    def _cells(self, commit: Commit, sizes: dict[str, int]) -> list[Text]:
        dim = "" if commit.in_history else "dim"
        # Readable without colour too: ● marked, @ the pool's HEAD, × dropped from the history.
        sign = "●" if commit.sha == self.marked else "@" if commit.sha == self.head else "×" if dim else " "
        decision = commit.mark.decision if commit.mark else ""
        tone = {"approve": "green", "rollback": "red", "rerun": "yellow", "pending": "bold yellow"}.get(decision, dim)
        review = cut(review_text(commit, sizes["decision"] > 17), sizes["decision"])
        cells = {
            "": Text(sign, style="bold yellow" if commit.sha == self.marked else dim),
            "commit": Text(commit.short, style=dim or "bold"),
            "decision": Text(review, style=tone if dim == "" else dim),
        }
        if self.detailed:
            micro = commit.micro.short_label if commit.micro else ""
            subject = commit.summary if commit.micro else commit.subject
            cells |= {
                "subject": Text(cut(subject, sizes["subject"]), style=dim),
                "micro-step": Text(cut(micro, sizes["micro-step"]), style=dim),
                "loss": Text(cut(commit.outcome, sizes["loss"]), style=dim),
                "notes": Text(cut(notes_text(commit), sizes["notes"]), style=dim),
            }
        else:
            waiting = commit.mark is not None and commit.mark.decision == "pending" and sizes["decision"] <= 17
            subject = Text(cut(("awaiting review · " if waiting else "") + commit.subject, sizes["subject"]), style=dim)
            if waiting:
                subject.stylize("bold yellow", 0, len("awaiting review"))
            cells["subject"] = subject
        return [cells[name] for name in sizes]

    def on_resize(self, event: Resize) -> None:
        if self.shown:
            self._draw(self.selected.sha if self.selected else None)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.shown):
            self.post_message(self.CommitChosen(self.shown[event.cursor_row]))

    def action_open(self) -> None:
        if self.selected is not None:
            self.post_message(self.Opened(self.selected))

    def on_key(self, event: Key) -> None:
        if event.key != "g":
            self._g_armed = False

    def action_go_top(self) -> None:
        """`g g` goes to the newest commit; a single `g` waits a moment for the second."""
        if self._g_armed:
            self._g_armed = False
            self.action_scroll_top()
            return
        self._g_armed = True
        self.set_timer(GG_SECONDS, self._disarm)

    def _disarm(self) -> None:
        self._g_armed = False
