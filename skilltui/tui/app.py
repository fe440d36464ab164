"""The terminal app: watch a training run live and review every backward micro-step.

`skilltui train` (without --auto, on a terminal) and `skilltui demo` open it. It renders
the engine's events and answers the engine's review requests; it adds no training logic.

How it stays responsive while the run streams:

- the `Trainer` runs as a Textual worker in the app's own event loop; the engine already
  keeps its blocking work (git, scoring) off the loop, and so do the panes (pool, commits
  and notes are read through `asyncio.to_thread`);
- the app's event sink only appends to a queue. A timer folds the queue into a
  `RunState` every `FLUSH_SECONDS` and redraws only the panes that changed, so a burst of
  streamed text costs one write to the log, not one redraw per delta;
- review requests are answered by pushing a `ReviewScreen` and awaiting its result; only
  the micro-step waits, never the screen.

Quitting while the run trains asks first, then stops the trainer where it is. Every
engine artifact is written atomically, so running the same command again resumes.

    skilltui demo                                   # the bundled works, offline
    skilltui train --work WORK [--offline-latency 0.3]
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import TabbedContent, TabPane
from textual.worker import Worker

from ..agents.base import Backend
from ..commits import PENDING as AWAITING
from ..commits import Commit
from ..components.commit_list import CommitList
from ..components.confirm import ConfirmScreen
from ..components.diff_view import DiffView
from ..engine import events as ev
from ..engine.loop import Outcome, Trainer
from ..engine.review import Decision, ReviewRequest
from ..engine.session import OpenedRun
from ..signals import PENDING, STOP_SIGNALS, exit_code, name_of
from . import themes
from .pool_reader import PoolReader
from .reviewer import ScreenReviewer
from .screens.help import HelpScreen
from .screens.review import ReviewScreen
from .state import RunState, StepKey
from .widgets.key_bar import KeyBar
from .widgets.live_output import LiveOutput
from .widgets.loss_curve import LossCurve
from .widgets.note_view import NoteView
from .widgets.pool_tree import PoolTree, pool_label
from .widgets.report_view import ReportView
from .widgets.run_header import HeaderFacts, RunHeader
from .widgets.works_table import WorksTable

FLUSH_SECONDS = 0.06
PANES = ("output", "report", "pool", "commits")
REVIEW = "review"


class WorkCommands(Provider):
    """Command palette entries "Jump to work NAME", one per work of the run."""

    def _commands(self) -> list[tuple[str, Callable[[], None]]]:
        app = self.app
        if not isinstance(app, TrainingApp):
            return []
        return [(f"Jump to work {name}", partial(app.jump_to_work, name)) for name in app.state.rows]

    async def discover(self) -> Hits:
        for text, callback in self._commands():
            yield DiscoveryHit(text, callback, help="show this work's output, loss report and curve")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, callback in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), callback, help="show this work's output, report and curve")


class TrainingApp(App[int]):
    """Train one opened run with a person reviewing every micro-step. Returns the exit code."""

    TITLE = "skilltui"
    CSS = """
    Screen { layout: vertical; }
    #top { height: 2fr; min-height: 7; max-height: 22; }
    #works-box {
        width: auto;
        max-width: 3fr;
        border: round $primary 80%;
        border-title-color: $text-primary;
        border-subtitle-color: $foreground-muted;
        border-title-style: bold;
    }
    #curve {
        width: 1fr;
        min-width: 24;
        border: round $secondary 80%;
        border-title-color: $text-secondary;
        border-title-style: bold;
    }
    #panes { height: 3fr; }
    Tab { color: $foreground-muted; }
    Tab.-active, Tab:hover { color: $foreground; }
    Underline > .underline--bar { color: $text-primary; background: $panel-lighten-2; }
    #panes TabPane { padding: 0; }
    #pool-tree { width: 34; min-width: 24; border-right: vkey $panel-lighten-2; }
    #commit-list { width: 2fr; min-width: 30; border-right: vkey $panel-lighten-2; }
    #commit-diff { width: 3fr; }
    """

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("p", "pause", "Pause"),
        Binding("p", "resume", "Resume"),
        Binding("v", "open_review", "Review"),
        Binding("slash", "search_output", "Search"),
        Binding("question_mark", "help", "Help"),
        Binding("t", "toggle_theme", "Theme", show=False),
        Binding("1", "show_pane('output')", "Output", show=False),
        Binding("2", "show_pane('report')", "Report", show=False),
        Binding("3", "show_pane('pool')", "Pool", show=False),
        Binding("4", "show_pane('commits')", "Commits", show=False),
        Binding("left_square_bracket", "report_step(-1)", "Earlier report", show=False),
        Binding("right_square_bracket", "report_step(1)", "Later report", show=False),
    ]
    COMMANDS = App.COMMANDS | {WorkCommands}

    selected_work: reactive[str | None] = reactive(None, init=False)

    def __init__(
        self,
        opened: OpenedRun,
        backend: Backend,
        *,
        secrets: list[str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.opened = opened
        self.run_dir = opened.run.root
        self.state = RunState(opened.run.id, opened.run.root, sorted(w.name for w in opened.works))
        self.bus = ev.EventBus()
        self.reviewer = ScreenReviewer(self.ask_review)
        self.trainer = Trainer(opened, backend, self.reviewer, self.bus, secrets=secrets)
        self.outcome: Outcome | None = None
        self._clock = clock
        self._started = clock()
        self._queue: deque[ev.Event] = deque()
        self._jsonl: ev.JsonlSink | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        self._trainer_worker: Worker | None = None
        self._pending: tuple[ReviewRequest, asyncio.Future[Decision]] | None = None
        self._review_queued = False  # a review arrived while a dialog was open; it opens when that closes
        self._reader = PoolReader(opened.run.memory)
        self._report_pin: StepKey | None = None
        self._report_shown: tuple[str, StepKey, str] | None = None
        self._diff_shown: str | None = None
        self._theme_problems: list[str] = []
        self._bindings_key: tuple[bool, bool, bool] | None = None
        self._signals: dict[int, Any] = {}
        self.stopped_by: int | None = None

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        with Horizontal(id="top"):
            with Vertical(id="works-box") as box:
                box.border_title = "works"
                yield WorksTable(self.state.rows.values(), id="works")
            curve = LossCurve(id="curve")
            curve.border_title = "loss"
            yield curve
        with TabbedContent(id="panes", initial="output"):
            with TabPane("Output", id="output"):
                yield LiveOutput(id="live")
            with TabPane("Report", id="report"):
                yield ReportView("*No loss report yet for this work.*", id="report-view")
            with TabPane("Pool", id="pool"):
                with Horizontal():
                    yield PoolTree(id="pool-tree")
                    yield NoteView(id="note-view")
            with TabPane("Commits", id="commits"):
                with Horizontal():
                    yield CommitList(id="commit-list")
                    yield DiffView(id="commit-diff")
        yield KeyBar()

    def on_mount(self) -> None:
        self._install_themes()
        self._jsonl = ev.JsonlSink(self.opened.run.events_path)
        self._unsubscribe = [self.bus.subscribe(self._jsonl), self.bus.subscribe(self._queue.append)]
        self.set_interval(FLUSH_SECONDS, self._flush_events)
        self.set_interval(1.0, self._tick)
        self._tick()
        self.query_one(WorksTable).focus()
        self._watch_signals()
        self._boot()

    def _watch_signals(self) -> None:
        """SIGTERM, SIGHUP (and a SIGINT from `kill`) stop the run and close the app, as q then y does."""
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)
            try:
                loop.add_signal_handler(signum, self._on_stop_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread (tests)
                return
            self._signals[signum] = previous
        if PENDING:  # one came while the app was starting
            self._on_stop_signal(PENDING[0])

    def _on_stop_signal(self, signum: int) -> None:
        self.stopped_by = self.stopped_by or signum
        self.stop_training(f"stopped by {name_of(signum)}")
        self.exit(exit_code(signum))

    def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for signum, previous in self._signals.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous)  # the command's `defer`, until the terminal is given back
        # However the app ends, the trainer stops with it and the record says so before
        # the run's events file is closed.
        self.stop_training("the app closed; run the same command to resume")
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self._jsonl is not None:
            self._jsonl.close()
            self._jsonl = None

    # -- themes --------------------------------------------------------------------------

    def _install_themes(self) -> None:
        loaded = themes.load_themes()
        for theme in loaded.themes:
            self.register_theme(theme)
        self._theme_problems = loaded.problems
        for problem in loaded.problems:
            self.notify(problem, title="theme skipped", severity="warning", timeout=8)
        wanted = themes.remembered_theme()
        self.theme = wanted if wanted in self.available_themes else themes.DEFAULT_THEME
        self.theme_changed_signal.subscribe(self, lambda theme: themes.remember_theme(theme.name))

    def action_toggle_theme(self) -> None:
        self.theme = themes.LIGHT_THEME if self.current_theme.dark else themes.DEFAULT_THEME

    # -- the run -------------------------------------------------------------------------

    @work(group="boot")
    async def _boot(self) -> None:
        """Fold what earlier sessions of this run recorded, then start training."""
        history = await asyncio.to_thread(ev.read_events, self.opened.run.events_path)
        for event in history:
            self.state.apply(event, replay=True)
        self._flush_events(force=True)
        if self.outcome is None:  # the person may have quit while the history was read
            self._trainer_worker = self.run_worker(self._train, name="trainer", group="trainer", exit_on_error=False)

    async def _train(self) -> None:
        try:
            self.outcome = await self.trainer.train()
        except Exception as exc:  # noqa: BLE001 - an engine bug must end the run visibly, not kill the app
            self.outcome = Outcome("failed", f"{type(exc).__name__}: {exc}")
            self.bus.emit(
                ev.RunFinished(status="failed", reason=self.outcome.reason, cost_usd=round(self.trainer.ctx.spent, 6))
            )
        self._update_bindings()

    @property
    def training(self) -> bool:
        """True while the trainer runs (or is about to start)."""
        return self.outcome is None

    @property
    def exit_code(self) -> int:
        return 1 if self.outcome is not None and self.outcome.status == "failed" else 0

    def stop_training(self, reason: str) -> None:
        """Stop the trainer where it is; the same command resumes the run."""
        if self.outcome is not None:
            return
        self.trainer.stop(reason)
        if self._trainer_worker is not None:
            self._trainer_worker.cancel()
        self.outcome = Outcome("stopped", reason)
        self.bus.emit(ev.RunFinished(status="stopped", reason=reason, cost_usd=round(self.trainer.ctx.spent, 6)))

    # -- events in, panes out ------------------------------------------------------------

    def _flush_events(self, force: bool = False) -> None:
        """Fold queued events into the state and redraw what they changed."""
        if self._review_queued and len(self.screen_stack) == 1:
            self._show_review()
        if not self._queue and not force:
            return
        try:
            self._redraw(force)
        except NoMatches:
            pass  # the app is closing and its panes are already gone

    def _redraw(self, force: bool) -> None:
        queue, state = self._queue, self.state
        while queue:
            event = queue.popleft()
            state.apply({"kind": event.kind, **event.__dict__})
        dirty, outputs = state.take_dirty()
        if force:
            dirty |= {"header", "works", "curve", "report", "pool", "commits"}
        if "header" in dirty:
            self._tick()
        if "works" in dirty:
            self.query_one(WorksTable).show(state.rows.values())
        if "curve" in dirty:
            self.query_one(LossCurve).show(
                state.steps,
                state.losses,
                state.means,
                mean_works=state.mean_works,
                val_means=state.val_means,
                val_counts=state.val_counts,
            )
        if self.selected_work in outputs:
            self.query_one(LiveOutput).catch_up()
        if "report" in dirty:
            self._refresh_report()
        if "pool" in dirty or "commits" in dirty:
            self._read_pool()
        if "notices" in dirty:
            while state.notices:
                message = state.notices.popleft()
                bad = "failed" in message
                self.notify(message, severity="error" if bad else "information", timeout=6)
        if "header" in dirty or "notices" in dirty:
            self._update_bindings()

    def _tick(self) -> None:
        s = self.state
        header = self.query_one_optional(RunHeader)
        if header is None:
            return  # the app is closing
        header.facts = HeaderFacts(
            run_id=s.run_id,
            epoch=s.epoch,
            step=s.step,
            first=s.first,
            last=s.last,
            elapsed=self._clock() - self._started,
            tokens=s.tokens,
            cost=s.cost,
            cost_known=s.cost_known,
            status=s.status,
            paused=s.paused,
            throttled=s.throttled,
            batch=s.batch,
        )

    # -- selection -----------------------------------------------------------------------

    @on(WorksTable.WorkChosen)
    def _work_chosen(self, message: WorksTable.WorkChosen) -> None:
        self.selected_work = message.work

    def watch_selected_work(self, work: str | None) -> None:
        self.query_one(LiveOutput).follow(work, self.state.outputs.get(work) if work else None)
        self.query_one(LossCurve).selected = work
        # The works table's cursor and the curve's legend name the work; a tab label that
        # changed width on every move would cost a layout of the whole screen each time.
        self.query_one("#works-box").border_subtitle = work or ""
        self._report_pin = None
        self._refresh_report()

    def jump_to_work(self, name: str) -> None:
        self.query_one(WorksTable).choose(name)
        self.action_show_pane("output")

    def action_show_pane(self, pane: str) -> None:
        """Show a pane and put the keys where that pane needs them (the tree, the commit list)."""
        if pane not in PANES:
            return
        self.query_one(TabbedContent).active = pane
        focus = {"pool": "#pool-tree", "commits": "#commit-list"}.get(pane, "#works")
        self.query_one(focus).focus()

    def action_search_output(self) -> None:
        self.action_show_pane("output")
        self.query_one(LiveOutput).ask_search()

    def action_report_step(self, delta: int) -> None:
        work = self.selected_work
        if work is None:
            return
        keys = self.state.loss_steps(work)
        if not keys:
            return
        current = self._report_pin if self._report_pin in keys else keys[-1]
        index = max(0, min(len(keys) - 1, keys.index(current) + delta))
        if index == keys.index(current):
            edge = "first" if delta < 0 else "latest"
            self.notify(f"This is {work}'s {edge} loss report: epoch {current[0]} step {current[1]}.", timeout=3)
        self._report_pin = None if index == len(keys) - 1 else keys[index]
        self.action_show_pane("report")
        self._refresh_report()

    @on(TabbedContent.TabActivated, "#panes")
    def _pane_shown(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "report":
            self._refresh_report()

    def _refresh_report(self) -> None:
        # A hidden report is not drawn: re-rendering it would cost a layout of the whole
        # screen on every move between works. It catches up when its tab is shown.
        if self.query_one("#panes", TabbedContent).active != "report":
            return
        work = self.selected_work
        keys = self.state.loss_steps(work) if work else []
        if not work or not keys:
            return
        key = self._report_pin if self._report_pin in keys else keys[-1]
        path = self.state.reports[work][key]
        if self._report_shown == (work, key, path):
            return
        self._report_shown = (work, key, path)
        title = f"{work} · epoch {key[0]} step {key[1]} · report {keys.index(key) + 1} of {len(keys)}  [ ]"
        self._load_report(path, title)

    @work(exclusive=True, group="report")
    async def _load_report(self, path: str, title: str) -> None:
        text = await asyncio.to_thread(_read_text, path)
        with self._panes() as main:
            main.query_one(ReportView).show(text or "*the report is missing from the run folder*", title)
            main.query_one(TabbedContent).get_tab("report").label = f"Report · {title.split(' · ')[1]}"

    # -- pool and commits ----------------------------------------------------------------

    @contextmanager
    def _panes(self) -> Iterator[Screen]:
        """The main screen for a worker that resumes after an await, whatever happened meanwhile.

        By then the review screen may be on top (`App.query_one` searches only the top
        screen) or the app may be closing and taking its widgets down; the update is then
        dropped instead of failing the worker, and with it the app.
        """
        main = self.screen_stack[0] if self.screen_stack else Screen()  # a bare Screen matches nothing
        try:
            yield main
        except NoMatches:
            if self.is_running and main.is_attached:
                raise  # the main screen is up and lacks a pane: a bug to see, not to hide

    @work(exclusive=True, group="pool")
    async def _read_pool(self) -> None:
        view = await asyncio.to_thread(self._reader.read)
        # The commit a waiting review is about is marked so, and its notes are not counted as kept.
        waiting = self._pending[0] if self._pending is not None else None
        commits = view.commits
        for c in commits:
            c.mark = AWAITING if waiting is not None and c.sha == waiting.after else self.state.marks.get(c.sha)
        unreviewed = set(waiting.added) if waiting is not None else set()
        changed = set(waiting.changed) if waiting is not None else set()
        with self._panes() as main:
            main.query_one(PoolTree).show(view.notes, self.state.attribution, unreviewed | changed)
            main.query_one(CommitList).show(commits)
            main.query_one(TabbedContent).get_tab("commits").label = f"Commits · {len(commits)}"
            main.query_one(TabbedContent).get_tab("pool").label = pool_label(view.notes, sorted(unreviewed))
            note = main.query_one(NoteView)
            if note.path is not None:
                self._load_note(note.path)

    @on(PoolTree.NoteChosen)
    def _note_chosen(self, message: PoolTree.NoteChosen) -> None:
        self._load_note(message.path)

    @work(exclusive=True, group="note")
    async def _load_note(self, path: str) -> None:
        text = await asyncio.to_thread(self._reader.note, path)
        with self._panes() as main:
            main.query_one(NoteView).show(path, text)

    @on(CommitList.CommitChosen)
    def _commit_chosen(self, message: CommitList.CommitChosen) -> None:
        if message.commit.sha != self._diff_shown:
            self._diff_shown = message.commit.sha
            self._load_diff(message.commit)

    @work(exclusive=True, group="diff")
    async def _load_diff(self, commit: Commit) -> None:
        patch = await asyncio.to_thread(self._reader.patch, commit.sha)
        with self._panes() as main:
            diff = main.query_one("#commit-diff", DiffView)
            diff.empty_text = "(an empty commit: nothing changed)"
            diff.patch = patch
            diff.border_title = f"{commit.short} {commit.subject}"

    # -- review --------------------------------------------------------------------------

    async def ask_review(self, request: ReviewRequest) -> Decision:
        """The engine's review request, answered by a person on the review screen."""
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._pending = (request, future)
        self._update_bindings()
        self._read_pool()
        try:
            if self.is_screen_installed(REVIEW):
                await self.get_screen(REVIEW, ReviewScreen).show(request)
            else:
                self.install_screen(ReviewScreen(request), REVIEW)
            self._show_review()
            return await future
        finally:
            self._pending = None
            self._read_pool()
            # After the next paint: the screen the person returns to should show first.
            self.call_after_refresh(self._update_bindings)

    def _show_review(self) -> None:
        if self._pending is None or not self.is_screen_installed(REVIEW):
            return
        screen = self.get_screen(REVIEW, ReviewScreen)
        if screen in self.screen_stack:
            return
        if len(self.screen_stack) > 1:
            # A dialog, the help or the palette is open: a review pushed over it would take
            # its keys (and a second palette over it crashed the app). It opens once they close.
            if not self._review_queued:
                self._review_queued = True
                self.notify("A micro-step waits for your review; it opens when this closes.", timeout=5)
            return
        self._review_queued = False
        future = self._pending[1]

        def decided(decision: Decision | None) -> None:
            if decision is None:
                self.notify("The micro-step waits for your review: press v to return to it.", timeout=5)
            elif not future.done():
                future.set_result(decision)

        self.push_screen(screen, decided)

    def action_open_review(self) -> None:
        self._show_review()

    # -- controls ------------------------------------------------------------------------

    def _update_bindings(self) -> None:
        """Refresh the key bar only when what it offers changed (pause, resume, a waiting review)."""
        key = (self.training, self.trainer.paused, self._pending is not None)
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pause":
            return self.training and not self.trainer.paused
        if action == "resume":
            return self.training and self.trainer.paused
        if action == "open_review":
            return self._pending is not None and not isinstance(self.screen, ReviewScreen)
        if action == "search_output":
            return len(self.screen_stack) == 1  # the output it searches is on the main screen
        return True

    def action_pause(self) -> None:
        if self.training:
            self.trainer.pause()
            self.notify("Pausing: calls in flight finish, the next stage waits for resume (p).", timeout=4)
        self._update_bindings()

    def action_resume(self) -> None:
        if self.training:
            self.trainer.resume()
        self._update_bindings()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_copy_run_path(self) -> None:
        # OSC 52 asks the terminal to set the clipboard; nothing says whether it did (tmux drops it
        # unless set-clipboard is on), so the path is shown to copy by hand too.
        path = str(self.run_dir)
        self.copy_to_clipboard(path)
        tmux = " tmux passes it on only with `set -g set-clipboard on`." if "TMUX" in os.environ else ""
        self.notify(f"{path}\nSent to the clipboard with OSC 52, if the terminal allows it.{tmux}", timeout=10)

    async def action_quit(self) -> None:
        if not self.training:
            self.exit(self.exit_code)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.stop_training("quit from the app; run the same command to resume")
                self.exit(self.exit_code)

        self.push_screen(
            ConfirmScreen(
                "Stop training and quit?",
                "Finished stages are kept; calls in flight are dropped. Run the same command again to resume "
                "from here.",
                yes="y  quit",
            ),
            answered,
        )

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own "Theme" entry is the "Switch theme" below; one is enough.
        yield from (command for command in super().get_system_commands(screen) if command.title != "Theme")
        if self.training and not self.trainer.paused:
            yield SystemCommand("Pause after the current stage", "calls in flight finish; p resumes", self.action_pause)
        if self.training and self.trainer.paused:
            yield SystemCommand("Resume training", "the next stage starts", self.action_resume)
        yield SystemCommand("Switch theme", "choose among the dark, light and your own themes", self.search_themes)
        yield SystemCommand("Copy the run folder path", str(self.run_dir), self.action_copy_run_path)
        if self._pending is not None:
            yield SystemCommand("Open the waiting review", "the micro-step waits for you", self._show_review)


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def settle_heap() -> None:
    """Move everything imported so far out of the garbage collector's sight.

    By the time the app starts, Textual, Rich, the SDKs and GitPython have made some
    400,000 long-lived objects, and every full collection walked them all: a 60-100 ms
    pause, at random, in the middle of a key press. Frozen, they are never walked again;
    they were never going to be freed anyway.
    """
    gc.collect()
    gc.freeze()


def run_app(opened: OpenedRun, backend: Backend, *, secrets: list[str]) -> int:
    """Run the app on an opened run until the person quits. 0: finished, stopped or quit; 1: failed."""
    app = TrainingApp(opened, backend, secrets=secrets)
    settle_heap()
    app.run()
    if app.stopped_by is not None:
        print(f"skilltui: run stopped by {name_of(app.stopped_by)}; run the same command to resume", file=sys.stderr)
        return exit_code(app.stopped_by)
    outcome = app.outcome
    if outcome is not None and outcome.status == "failed":
        print(f"skilltui: run failed: {outcome.reason}", file=sys.stderr)
        return 1
    if outcome is not None and outcome.status == "stopped":
        print(f"skilltui: run stopped ({outcome.reason})", file=sys.stderr)
    return 0
