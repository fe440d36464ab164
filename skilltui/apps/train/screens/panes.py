"""The main screen's lower panes that read from disk: the loss report, the pool tree and note, the commits and diff.

Every read runs in a thread (`asyncio.to_thread`) in an exclusive worker, so a burst of
refreshes costs one read, and the screen never waits on git. A worker that comes back
after the app began to close finds its widgets gone and drops its update instead of
failing (and with it the app): `_alive` is that check.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

from textual import on, work
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import TabbedContent

from ....model.at import StepKey
from ....model.commits import PENDING as AWAITING
from ....model.summary import pool_curve
from ....model.view import RunView
from ....store.run_folder import Run
from ...shared.editor import edit_note_by_hand
from ...shared.widgets.commit_list import CommitList
from ...shared.widgets.diff_view import DiffView
from ...shared.widgets.report_view import ReportView
from ..pool_reader import PoolReader
from ..state import Commit
from ..widgets.note_view import NoteView
from ..widgets.pool_size import PoolSize
from ..widgets.pool_tree import PoolTree, pool_label


def read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


class DiskPanes(Screen):
    """The panes of the main screen fed by reads of the run folder and the pool."""

    view: RunView
    reader: PoolReader
    selected_work: str | None

    def init_panes(self) -> None:
        self._report_pin: StepKey | None = None
        self._report_shown: tuple[str, StepKey, str] | None = None
        self._diff_shown: str | None = None
        self._pool_read: tuple[list[tuple[str, str]], set[str], list[Commit]] | None = None
        self._labels: dict[str, str] = {}  # tab labels to set (pane id to text)

    @contextmanager
    def _alive(self) -> Iterator[None]:
        """Drop a worker's update when the screen went away while it read."""
        try:
            yield
        except NoMatches:
            if self.is_attached and self.app.is_running:
                raise  # the screen is up and lacks a pane: a bug to see, not to hide

    # -- the report ----------------------------------------------------------------------

    def report_step(self, delta: int) -> None:
        work = self.selected_work
        keys = self.view.loss_steps(work) if work else []
        if not keys:
            return
        current = self._report_pin if self._report_pin in keys else keys[-1]
        index = max(0, min(len(keys) - 1, keys.index(current) + delta))
        if index == keys.index(current):
            edge = "first" if delta < 0 else "latest"
            self.notify(f"This is the {edge} loss report of {work}: epoch {current[0]} step {current[1]}.", timeout=3)
        self._report_pin = None if index == len(keys) - 1 else keys[index]
        self.refresh_report()

    def refresh_report(self) -> None:
        # A hidden report is not drawn: re-rendering it would cost a layout of the whole
        # screen on every move between works. It catches up when its tab is shown.
        if self.query_one("#panes", TabbedContent).active != "report":
            return
        work = self.selected_work
        keys = self.view.loss_steps(work) if work else []
        if not work or not keys:
            return
        key = self._report_pin if self._report_pin in keys else keys[-1]
        path = self.view.steps[key].reports[work]
        if self._report_shown == (work, key, path):
            return
        self._report_shown = (work, key, path)
        title = f"{work} · epoch {key[0]} step {key[1]} · report {keys.index(key) + 1} of {len(keys)}  [ ]"
        self._load_report(path, title)

    @work(exclusive=True, group="report")
    async def _load_report(self, path: str, title: str) -> None:
        text = await asyncio.to_thread(read_text, path)
        with self._alive():
            self.query_one(ReportView).show(text or "*the report is missing from the run folder*", title)
            self._label("report", f"Report · {title.split(' · ')[1]}")

    # -- pool and commits ----------------------------------------------------------------

    @work(exclusive=True, group="pool")
    async def read_pool(self) -> None:
        view = await asyncio.to_thread(self.reader.read)
        # The commit a waiting review is about is marked so, and its notes are not counted as kept.
        waiting = self.view.pending_review
        micro = self.view.micro_steps.get(waiting.key.micro_key) if waiting is not None else None
        commits = view.commits
        for c in commits:
            c.mark = AWAITING if waiting is not None and c.sha == waiting.after else self.view.marks.get(c.sha)
        unreviewed = set(micro.added) if micro is not None else set()
        changed = set(micro.changed) if micro is not None else set()
        self._pool_read = (view.notes, unreviewed | changed, commits)
        with self._alive():
            self._label("commits", f"Commits · {len(commits)}")
            self._label("pool", pool_label(view.notes, sorted(unreviewed)))
            self.draw_pool()

    def draw_pool(self) -> None:
        """Bring the Pool and Commits panes up to the last read, if the one showing needs it.

        A hidden tree or list is not rebuilt: every commit would cost a layout of the whole
        screen for a pane nobody sees. The pane catches up when its tab is shown.
        """
        if self._pool_read is None:
            return
        notes, pending, commits = self._pool_read
        active = self.query_one("#panes", TabbedContent).active
        if active == "pool":
            self.query_one(PoolSize).show(pool_curve(self.view))
            self.query_one(PoolTree).show(notes, self.view.attribution, pending)
            note = self.query_one(NoteView)
            if note.path is not None:
                self._load_note(note.path)
        elif active == "commits":
            self.query_one(CommitList).show(commits)

    def _label(self, pane: str, text: str) -> None:
        self._labels[pane] = text
        self.draw_labels()

    def draw_labels(self) -> None:
        """Relabel a tab only when its words change: a new label lays the whole screen out again."""
        tabs = self.query_one(TabbedContent)
        for pane, text in self._labels.items():
            tab = tabs.get_tab(pane)
            if tab.label.plain != text:
                tab.label = text
        self._labels.clear()

    @on(PoolTree.NoteChosen)
    def _note_chosen(self, message: PoolTree.NoteChosen) -> None:
        self._load_note(message.path)

    @on(PoolTree.EditWanted)
    def _edit_wanted(self, message: PoolTree.EditWanted) -> None:
        app = self.app
        if getattr(app, "training", False):
            # The next micro-step builds on the pool as it is, and a forward pass may be
            # reading this note right now: an edit would change training under its feet.
            self.notify(
                "Editing a note while training runs is not allowed; once the run ends (or after q), "
                "e commits your edit by hand, as `skilltui review` would",
                severity="warning",
                timeout=6,
            )
            return
        self._edit_note(message.path)

    def _edit_note(self, path: str) -> None:
        edit_note_by_hand(self.app, Run(self.reader.root.parent), path)
        self.read_pool()

    @work(exclusive=True, group="note")
    async def _load_note(self, path: str) -> None:
        text = await asyncio.to_thread(self.reader.note, path)
        with self._alive():
            self.query_one(NoteView).show_note(path, text)

    @on(CommitList.CommitChosen)
    def _commit_chosen(self, message: CommitList.CommitChosen) -> None:
        if message.commit.sha != self._diff_shown:
            self._diff_shown = message.commit.sha
            self._load_diff(message.commit)

    @work(exclusive=True, group="diff")
    async def _load_diff(self, commit: Commit) -> None:
        patch = await asyncio.to_thread(self.reader.patch, commit.sha)
        with self._alive():
            diff = self.query_one("#commit-diff", DiffView)
            diff.empty_text = "(an empty commit: nothing changed)"
            diff.patch = patch
            diff.border_title = f"{commit.short} {commit.subject}"
