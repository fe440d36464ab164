"""The review app's main screen: the pool's commits with everything known about each, and the keys that act on them.

Reading never blocks the screen: loading the history, a diff or a search index runs in a
thread worker and hands its result back. Changing history (revert, reset) goes through
`operations`, which holds the run's lock for the length of the change; this screen only
asks first and reports what happened, or why nothing did, on the status line.

While another process trains the run, the screen polls the pool's HEAD, its kept refs, the
events file and the lock, and reloads when any of them moves, so a reviewer in a second
terminal watches commits arrive; a selection on the newest commit follows the newest.
"""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Input

from ....core.words import counted
from ....runs import operations
from ....runs.locate import marks
from ....runs.records import Commit, History, commit_patch, load_history, range_patch, search_text
from ....store.run_folder import Run
from ...shared import keymap
from ...shared.screens.confirm import ConfirmScreen
from ...shared.screens.diff import DiffScreen
from ...shared.widgets.commit_detail import CommitDetail
from ...shared.widgets.commit_list import CommitList
from ...shared.widgets.run_header import RunHeader
from ..evidence import evidence_markdown
from ..widgets.search_bar import SearchBar
from ..widgets.status_line import StatusLine
from .evidence import EvidenceScreen


class HistoryScreen(Screen):
    """The commit list, the selected commit in full, and the status of the last action."""

    DEFAULT_CSS = """
    HistoryScreen {
        layout: vertical;
    }
    HistoryScreen > CommitList {
        border: round $panel-lighten-2;
    }
    HistoryScreen > CommitList:focus {
        border: round $primary;
    }
    """

    # The keys that act on a commit, from the one key map that the help and the docs show.
    BINDINGS = keymap.bindings("history")

    def __init__(self, run: Run, poll: float | None = 2.0) -> None:
        super().__init__()
        self.run = run
        self.poll = poll
        self.history: History | None = None
        self.marked: str | None = None
        self.all_commits = False
        self.query_text: str | None = None
        self.missed_search = False  # the status line says a search found nothing
        self.matches: set[str] | None = None
        self._search_index: dict[str, str] = {}
        self._fingerprint: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        yield RunHeader(id="run-header")
        yield CommitList(detailed=True, id="commits")
        yield CommitDetail(id="detail")
        yield StatusLine(id="status")
        yield SearchBar(id="search")
        yield Footer()

    # -- parts -----------------------------------------------------------------------------

    @property
    def commit_list(self) -> CommitList:
        return self.query_one(CommitList)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    @property
    def selected(self) -> Commit | None:
        return self.commit_list.selected

    def say(self, message: str, *, error: bool = False) -> None:
        self.status.say(message, error=error)

    # -- loading ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.commit_list.focus()
        self.load()
        if self.poll:
            self.set_interval(self.poll, self.check_for_changes)

    @work(thread=True, exclusive=True, group="load")
    def load(self, select: str | None = None) -> None:
        mark = marks(self.run)
        history = load_history(self.run)
        self.app.call_from_thread(self.apply, history, mark, select)

    @work(thread=True, exclusive=True, group="poll")
    def check_for_changes(self) -> None:
        """Reload when training (or another reviewer) moved the pool or wrote events."""
        mark = marks(self.run)
        if mark != self._fingerprint and self._fingerprint is not None:
            history = load_history(self.run)
            self.app.call_from_thread(self.apply, history, mark, None)

    def apply(self, history: History, mark: tuple[Any, ...], select: str | None) -> None:
        previous = self.history
        current = self.selected
        skipped = history.status.skipped
        if skipped and (previous is None or previous.status.skipped != skipped):
            self.notify(skipped, title="records skipped", severity="warning", timeout=10)
        self.history = history
        self._fingerprint = mark
        if select is None:
            # On the newest commit, follow the newest; anywhere else, stay put.
            if previous is None or current is None or current.sha == previous.head:
                select = history.head
            else:
                select = current.sha
        self.render_list(select)

    def shown_commits(self) -> list[Commit]:
        if self.history is None:
            return []
        commits = self.history.commits if self.all_commits else self.history.in_history
        if self.matches is not None:
            commits = [c for c in commits if c.sha in self.matches]
        return commits

    def render_list(self, select: str | None = None) -> None:
        if self.history is None:
            return
        if select is None and self.selected is not None:
            select = self.selected.sha
        shown = self.shown_commits()
        self.commit_list.show(shown, self.history.head, self.marked, select or self.history.head)
        self.query_one(RunHeader).show(self.history, len(shown), self.query_text, self.all_commits)
        self.query_one(CommitDetail).show(self.selected, self.history.head, self.history.attribution)

    @on(CommitList.CommitChosen)
    def _highlighted(self) -> None:
        if self.history is not None:
            self.query_one(CommitDetail).show(self.selected, self.history.head, self.history.attribution)

    def action_reload(self) -> None:
        self.load()

    # -- reading: diff, evidence, two commits ----------------------------------------------

    @on(CommitList.Opened)
    def _opened(self) -> None:
        self.action_open_diff()

    def action_open_diff(self) -> None:
        commit = self.selected
        if commit is not None:
            self._open_diff(commit)

    @work(thread=True, group="read")
    def _open_diff(self, commit: Commit) -> None:
        patch = commit_patch(self.run.pool, commit.sha)
        # A training commit's subject already names its micro-step ("train epoch 0 step 0
        # micro 1/1"); the label is added only where the subject does not say it.
        named = commit.micro is not None and commit.micro.label in commit.subject
        label = f" ({commit.micro.label})" if commit.micro and not named else ""
        title = f"{commit.short} {commit.subject}{label}   esc: back"
        empty = "this commit changes no note" + (
            ": an empty micro-step, the backward pass found nothing worth changing" if commit.micro else ""
        )
        self.app.call_from_thread(self.app.push_screen, DiffScreen(title, patch, empty, run=self.run))

    def action_evidence(self) -> None:
        commit = self.selected
        if commit is None:
            return
        if commit.micro is None:
            self.say(f"{commit.short} was not made by a micro-step ({commit.decision}); it has no evidence", error=True)
            return
        self._open_evidence(commit)

    @work(thread=True, group="read")
    def _open_evidence(self, commit: Commit) -> None:
        markdown = evidence_markdown(self.run, commit)
        title = f"evidence for {commit.short} ({commit.micro.label if commit.micro else commit.subject})   esc: back"
        self.app.call_from_thread(self.app.push_screen, EvidenceScreen(markdown, title))

    def action_mark(self) -> None:
        commit = self.selected
        if commit is None:
            return
        if self.marked == commit.sha:
            self.marked = None
            self.say(f"unmarked {commit.short}")
        else:
            self.marked = commit.sha
            self.say(f"marked {commit.short}; select another commit and press d to diff the two")
        self.render_list(commit.sha)

    def action_diff_marked(self) -> None:
        commit = self.selected
        if commit is None or self.history is None:
            return
        if self.marked is None:
            self.say("mark a commit with space first, then select another and press d", error=True)
            return
        if self.marked == commit.sha:
            self.say("the marked commit is the selected one; select another commit to diff against", error=True)
            return
        order = [c.sha for c in self.history.commits]
        first, second = self.marked, commit.sha
        # The list is newest first: the commit further down is the older one, the diff runs from it.
        older, newer = (first, second) if order.index(first) > order.index(second) else (second, first)
        self._open_range(older, newer)

    @work(thread=True, group="read")
    def _open_range(self, older: str, newer: str) -> None:
        patch = range_patch(self.run.pool, older, newer)
        title = f"{older[:7]}..{newer[:7]}: what the pool gained from the older to the newer   esc: back"
        self.app.call_from_thread(self.app.push_screen, DiffScreen(title, patch, "the two commits hold the same notes"))

    # -- search -----------------------------------------------------------------------------

    def action_search(self) -> None:
        self.query_one(SearchBar).open()

    @on(SearchBar.Closed)
    def _search_closed(self) -> None:
        self.commit_list.focus()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        bar = self.query_one(SearchBar)
        bar.close()
        self.commit_list.focus()
        query = event.value.strip()
        if not query:
            self.action_clear_search()
            return
        self._search(query)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str) -> None:
        history = self.history
        if history is None:
            return
        pool = self.run.pool
        needle = query.casefold()
        matches = set()
        for commit in history.commits:
            text = self._search_index.get(commit.sha)
            if text is None:
                # A commit never changes, so its searchable text is computed once per session.
                text = self._search_index[commit.sha] = search_text(pool, commit)
            if needle in text:
                matches.add(commit.sha)
        self.app.call_from_thread(self._searched, query, matches)

    def _searched(self, query: str, matches: set[str]) -> None:
        if not matches:
            self.say(f"no commit mentions {query!r} in its message or the notes it touched", error=True)
            self.missed_search = True
            return
        self.query_text = query
        self.matches = matches
        shown = self.shown_commits()
        self.render_list(shown[0].sha if shown else None)
        hidden = len(matches) - len(shown)
        extra = f" ({hidden} more among dropped commits: press a)" if hidden else ""
        self.say(f"{query!r} is in {counted(len(shown), 'commit')}{extra}; esc shows all")

    def action_clear_search(self) -> None:
        if self.query_text is None:
            if self.missed_search:  # esc takes a search's "no commit mentions …" away with it
                self.missed_search = False
                self.say("")
            return
        self.query_text = None
        self.matches = None
        self.render_list()
        self.say("search cleared; showing every commit")

    def action_toggle_all(self) -> None:
        self.all_commits = not self.all_commits
        self.render_list()
        self.say(
            "showing dropped commits too (grey, marked ×): reruns, roll backs and resets, kept under refs/skilltui"
            if self.all_commits
            else "showing the pool's history only"
        )

    # -- changing history: revert and reset ------------------------------------------------

    def action_revert(self) -> None:
        commit = self.selected
        if commit is None:
            return
        refusal = operations.training_refusal(self.run)
        if refusal:
            self.say(f"revert refused: {refusal}", error=True)
            return
        if not commit.in_history:
            self.say(f"revert refused: {commit.short} is not in the pool's history; nothing to revert", error=True)
            return
        # Asking first and refusing after the y would waste the person's yes.
        if not commit.files:
            self.say(f"revert refused: {commit.short} changes no note; there is nothing to revert", error=True)
            return
        if commit.reverted_by and not operations.revert_unfinished(self.run, commit.sha):  # else: finish it
            self.say(f"revert refused: {commit.short} is already reverted by {commit.reverted_by[:7]}", error=True)
            return
        question = f"Revert {commit.short} “{commit.subject}”?"
        detail = "A new commit will undo its changes to the notes. The commit itself stays in the history."
        self.app.push_screen(
            ConfirmScreen(question, detail, yes="y revert"), lambda yes: self._confirmed("revert", commit, yes)
        )

    def action_reset(self) -> None:
        commit = self.selected
        if commit is None or self.history is None:
            return
        refusal = operations.training_refusal(self.run)
        if refusal:
            self.say(f"reset refused: {refusal}", error=True)
            return
        if commit.sha == self.history.head:
            self.say(f"the pool is already at {commit.short}; nothing to reset", error=True)
            return
        newer = [c.sha for c in self.history.in_history].index(commit.sha) if commit.in_history else None
        dropped = (
            f"The {counted(newer, 'commit')} after it will leave the pool's history"
            if newer is not None
            else "The pool moves to this dropped commit"
        )
        question = f"Reset the pool to {commit.short} “{commit.subject}”?"
        detail = f"{dropped}; the current head {self.history.head[:7]} stays reachable as refs/skilltui/reset/<time>."
        self.app.push_screen(
            ConfirmScreen(question, detail, yes="y reset"), lambda yes: self._confirmed("reset", commit, yes)
        )

    def _confirmed(self, action: str, commit: Commit, yes: bool | None) -> None:
        if not yes:
            self.say(f"{action} cancelled; nothing changed")
            return
        self.say(f"{action} {commit.short}…")
        self._change(action, commit.sha)

    @work(thread=True, exclusive=True, group="change")
    def _change(self, action: str, sha: str) -> None:
        try:
            done = operations.revert(self.run, sha) if action == "revert" else operations.reset(self.run, sha)
        except operations.Refused as exc:
            self.app.call_from_thread(self.say, f"{action} refused: {exc}", error=True)
            return
        self.app.call_from_thread(self.say, done.message)
        mark = marks(self.run)
        history = load_history(self.run)
        self.app.call_from_thread(self.apply, history, mark, done.record.after)
