"""The pool's commits, newest first, each marked with the review decision that kept it.

`git log` of the pool is the parameter history; this list is how a person walks it. It
takes a list of `Commit` records, so it works the same on a live run and on a finished
one. While the newest commit is highlighted the list follows new commits as they land;
once a person picks an older one, it stays put.
"""

from __future__ import annotations

from textual import on
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..state import Commit, Mark


def mark_text(mark: Mark | None) -> tuple[str, str]:
    if mark is None:
        return "        ", ""
    sign = {"approve": "✓", "rollback": "↶", "rerun": "↻"}.get(mark.decision, "?")
    style = {"approve": "$text-success", "rollback": "$text-error"}.get(mark.decision, "$text-warning")
    return f"{sign} {mark.by:<6}", style


class CommitList(OptionList):
    """Commits of the pool; highlighting one posts `CommitList.CommitChosen`."""

    DEFAULT_CSS = """
    CommitList {
        height: 1fr;
        border: none;
        background: $surface;
    }
    CommitList:focus { background-tint: $foreground 4%; }
    """

    class CommitChosen(Message):
        """The person highlighted a commit; its diff should be shown."""

        def __init__(self, commit: Commit) -> None:
            super().__init__()
            self.commit = commit

    def __init__(self, commits: list[Commit] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self._commits: list[Commit] = []
        self._shown: list[tuple[str, Mark | None]] = []
        if commits:
            self.show(commits)

    @property
    def commits(self) -> list[Commit]:
        return list(self._commits)

    @property
    def chosen(self) -> Commit | None:
        if self.highlighted is None or not 0 <= self.highlighted < len(self._commits):
            return None
        return self._commits[self.highlighted]

    def show(self, commits: list[Commit]) -> None:
        """Replace the list, keeping the person's place (or following HEAD if they were on it)."""
        shown = [(c.sha, c.mark) for c in commits]
        if shown == self._shown:
            return
        chosen = self.chosen
        follow = chosen is None or self.highlighted == 0
        self._commits, self._shown = list(commits), shown
        self.set_options([Option(self._prompt(c), id=c.sha) for c in commits])
        if not commits:
            return
        index = 0
        if not follow and chosen is not None:
            index = next((i for i, c in enumerate(commits) if c.sha == chosen.sha), 0)
        # set_options cleared the highlight, so this always posts OptionHighlighted.
        self.highlighted = index

    def _prompt(self, commit: Commit) -> Content:
        mark, style = mark_text(commit.mark)
        return Content.assemble(
            (commit.short, "$text-accent"),
            " ",
            (mark, style),
            " ",
            commit.subject,
        )

    @on(OptionList.OptionHighlighted)
    def _chosen(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if 0 <= event.option_index < len(self._commits):
            self.post_message(self.CommitChosen(self._commits[event.option_index]))
