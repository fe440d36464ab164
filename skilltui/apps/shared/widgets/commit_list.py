"""The pool's commits, newest first, one line each: the list both apps walk the history with.

`git log` of the pool is the parameter history; this list is how a person walks it, in the
live app's Commits tab and in `skilltui review`. It takes `Commit` records and nothing else.
Columns fit the width they get: the subject takes what the fixed columns leave and is cut
with an ellipsis, never wrapped. With `detailed` (the history app) it adds the micro-step,
what the decision led to, and the notes touched.

While the newest commit is highlighted the list follows new commits as they land; once a
person picks an older one, it stays put. `j`/`k` move, `g g` goes to the top and `G` to the
bottom, as in vim, lazygit and tig.

Its colours are the theme's, named as component classes (`commit-list--approve`, ...), so
both themes keep every cell readable, on the zebra stripes and under the cursor alike; the
rows are drawn again when the theme changes.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.events import Key, Resize
from textual.message import Message
from textual.widgets import DataTable

from ....model.commits import Commit

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
        words = "reverted" if commit.reverted_by else mark.by or words
    return f"{mark.sign} {words}" if mark is not None else words


class CommitList(DataTable):
    """Commits of the pool; highlighting one posts `CommitList.CommitChosen`."""

    # What each tone means: a decision's colour, the marked commit's sign, and a commit dropped
    # from the pool's history (muted rather than `dim`, which falls under 4.5:1 on light paper).
    TONES: ClassVar[tuple[str, ...]] = ("approve", "rollback", "rerun", "pending", "marked", "dropped")
    COMPONENT_CLASSES: ClassVar[set[str]] = DataTable.COMPONENT_CLASSES | {f"commit-list--{t}" for t in TONES}

    DEFAULT_CSS = """
    CommitList {
        height: 1fr;
        background: $surface;
    }
    CommitList > .commit-list--approve { color: $text-success; }
    CommitList > .commit-list--rollback { color: $text-error; }
    CommitList > .commit-list--rerun { color: $text-warning; }
    CommitList > .commit-list--pending { color: $text-warning; text-style: bold; }
    CommitList > .commit-list--marked { color: $text-accent; text-style: bold; }
    CommitList > .commit-list--dropped { color: $foreground-muted; }
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

    def tone(self, name: str) -> Style:
        """The theme's style for `name` (one of `TONES`), as the Rich style a cell's Text takes."""
        return self.get_component_rich_style(f"commit-list--{name}", partial=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.shown and self.is_mounted:
            # A new theme: the cells hold the old theme's colours until they are drawn again.
            self.call_later(lambda: self._draw(self.selected.sha if self.selected else None))

    def _draw(self, select: str | None) -> None:
        width = self.size.width
        key = (
            width,
            tuple(self.tone(name) for name in self.TONES),
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
        # On a wide list the columns take the width of what they hold (up to a bound), so
        # "↶ rolled back by human" and "e0 s0 m1/2 a2" show whole while the subject still
        # has room; on a narrow one they keep the short widths that fit 80 columns.
        roomy = width >= 150 and self.detailed
        review = max((len(review_text(c, wide)) for c in self.shown), default=0)
        decision_cap = 28 if roomy else 20 if wide else 17
        fixed = [("", 1), ("commit", 7), ("decision", max(min(review, decision_cap), 8 if self.detailed else 1))]
        if self.detailed:
            micro = max((len(c.micro.short_label) for c in self.shown if c.micro), default=0)
            loss = max((len(c.outcome) for c in self.shown), default=0)
            fixed += [
                ("micro-step", max(10, min(micro, 16)) if roomy else 10),
                ("loss", max(13, min(loss, 16)) if roomy else 13 if wide else 12),
            ]
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
        muted = Style() if commit.in_history else self.tone("dropped")
        # Readable without colour too: ● marked, @ the pool's HEAD, × dropped from the history.
        marked = commit.sha == self.marked
        sign = "●" if marked else "@" if commit.sha == self.head else " " if commit.in_history else "×"
        decision = commit.mark.decision if commit.mark else ""
        tone = self.tone(decision) if commit.in_history and decision in self.TONES else muted
        review = cut(review_text(commit, sizes["decision"] > 17), sizes["decision"])
        cells = {
            "": Text(sign, style=self.tone("marked") if marked else muted),
            "commit": Text(commit.short, style=muted if not commit.in_history else "bold"),
            "decision": Text(review, style=tone),
        }
        if self.detailed:
            micro = commit.micro.short_label if commit.micro else ""
            said = commit.summary if commit.micro else commit.subject
            cells |= {
                "subject": Text(cut(said, sizes["subject"]), style=muted),
                "micro-step": Text(cut(micro, sizes["micro-step"]), style=muted),
                "loss": Text(cut(commit.outcome, sizes["loss"]), style=muted),
                "notes": Text(cut(notes_text(commit), sizes["notes"]), style=muted),
            }
        else:
            waiting = commit.mark is not None and commit.mark.decision == "pending" and sizes["decision"] <= 17
            line = cut(("awaiting review · " if waiting else "") + commit.subject, sizes["subject"])
            subject = Text(line, style=muted)
            if waiting:
                subject.stylize(self.tone("pending"), 0, len("awaiting review"))
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
