"""The main screen of the live app: the header, the works, the loss curve and the tabbed panes.

It renders the run model and nothing else. The app's event sink only queues events (the
driver has already folded each into the `RunView`); every `FLUSH_SECONDS` one flush hands
the queue to the output feed and redraws the panes those events touched, all inside
`App.batch_update()`, so Textual paints the lot as one frame: a burst of streamed text
costs one write to the log and one frame, not one redraw per delta. The header's second
is drawn by the same flush. While keys come the flush waits for a pause in them (at most
`HOLD_MAX`), so a key does not land behind the stream's frame; the key bench
(`bench/bench_tui.py`) measures what that buys.

On the first start (no `hint-seen` file in the config folder) a one-line hint says what the
panes are and that a review will open; the first review waits until a key hid the hint.
When the run ends, the summary (loss first to last step, notes, cost, next commands) is
shown above the keys.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable

from textual import on
from textual import screen as textual_screen
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.events import Resize
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static, TabbedContent, TabPane

from ....model import events as ev
from ....model.at import StepKey
from ....model.figures import step_means, val_means
from ....model.notices import notice_of
from ....model.view import RunView
from ...shared import keymap
from ...shared.widgets.commit_list import CommitList
from ...shared.widgets.diff_view import DiffView
from ...shared.widgets.report_view import ReportView
from ...shared.widgets.run_header import RunHeader
from ..output_feed import OutputFeed
from ..pool_reader import PoolReader
from ..widgets.end_summary import EndSummary
from ..widgets.key_bar import KeyBar
from ..widgets.live_output import LiveOutput
from ..widgets.loss_curve import LossCurve
from ..widgets.note_view import NoteView
from ..widgets.pool_size import PoolSize
from ..widgets.pool_tree import PoolTree
from ..widgets.works_table import COMPACT_BELOW, WorksBox, WorksTable
from .main_layout import HINT, PANES, TOUCHES, header_facts, header_state, work_time
from .panes import DiskPanes
from .side_by_side import open_side_by_side

FLUSH_SECONDS = 0.12  # how often what the trainer sent is drawn: 8 frames a second at most while works stream
# While keys come (the last one less than KEYS_HOLD ago) what streams in waits, for at most
# HOLD_MAX since it was last drawn: a key that lands on the stream's frame waits for that
# frame to end (figures: docs/benchmarks.md, "The app's frames").
KEYS_HOLD = 0.3
HOLD_MAX = 1.0
# Textual draws a screen's frames on a fixed grid of 1/60 s (TEXTUAL_FPS), so a key whose effect
# came just after another frame waits for the grid's next line. The flush is the stream's pace,
# so a finer grid only lets a key's frame start sooner; it draws nothing more often.
FRAMES_A_SECOND = 240
EVERYTHING = frozenset({"works", "curve", "report", "pool", "header"})


def pace_frames() -> None:
    """Let a key's frame start within 1/FRAMES_A_SECOND of its effect (TEXTUAL_FPS, when set, wins).

    Textual reads the grid when a screen first draws, so this runs before the app's screens exist.
    """
    if "TEXTUAL_FPS" not in os.environ:
        # Final in Textual, which offers no setting for it; set once, before any screen reads it.
        textual_screen.UPDATE_PERIOD = 1 / FRAMES_A_SECOND  # type: ignore[misc]


class MainScreen(DiskPanes):
    """The app's default screen; `take(event)` queues what the run emits."""

    # A `var`, not a `reactive`: the panes that show the selection refresh themselves, and a
    # reactive's repaint of the whole screen on every move cost each navigation key a full redraw.
    selected_work: var[str | None] = var(None, init=False)
    # The screen's own key: `/` searches the output here, and is not offered over a review or dialog.
    BINDINGS = keymap.bindings("main screen")

    class Ready(Message):
        """The panes are mounted: the run may start filling them."""

    class BackOnTop(Message):
        """The dialogs over the screen closed: a review that waited for them may open."""

    def __init__(
        self,
        view: RunView,
        reader: PoolReader,
        *,
        hint: bool = False,
        clock: Callable[[], float] = time.monotonic,
        last_input: Callable[[], float] = lambda: float("-inf"),
    ) -> None:
        super().__init__()
        self.view = view
        self.reader = reader
        self.feed = OutputFeed(view)
        self.queue: deque[ev.Event] = deque()
        self.hinting = hint
        self._dirty: set[str] = set()  # what the next flush draws besides what its events touch
        self._state_shown: tuple[object, ...] = ()  # the run's state as the header last drew it
        self._clock = clock
        self._started = clock()
        self._last_input = last_input  # time.monotonic() of the person's last key or mouse wheel
        self._drawn = time.monotonic()  # when the stream was last drawn
        self.init_panes()

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        yield Static(HINT, id="hint")
        yield EndSummary(id="summary")
        with Horizontal(id="top"):
            with WorksBox(id="works-box") as box:
                box.border_title = "works"
                yield WorksTable(self.view.works.values(), id="works")
            curve = LossCurve(id="curve")
            curve.border_title = "loss"
            yield curve
        with TabbedContent(id="panes", initial="output"):
            with TabPane("Output", id="output"):
                yield LiveOutput(id="live")
            with TabPane("Report", id="report"):
                yield ReportView("*No loss report yet for this work.*", id="report-view")
            with TabPane("Pool", id="pool"):
                with Vertical():
                    yield PoolSize(id="pool-size")
                    with Horizontal():
                        yield PoolTree(id="pool-tree")
                        yield NoteView(id="note-view")
            with TabPane("Commits", id="commits"):
                with Horizontal():
                    yield CommitList(id="commit-list")
                    yield DiffView(id="commit-diff")
        yield KeyBar()

    def on_mount(self) -> None:
        hint = self.query_one_optional("#hint")
        if hint is None:
            return  # a stop signal closed the app before the screen composed
        hint.display = self.hinting
        self._fit_works(self.size.width)
        self.set_interval(FLUSH_SECONDS, self.flush)
        self.set_interval(1.0, self.tick)
        self.draw_header()
        table = self.query_one(WorksTable)
        # The moved cursor and the output it selects in one frame: the table's posted message
        # would reach this screen after the frame that drew the cursor, so every key would wait
        # for a second frame. A watcher runs in the key's own call.
        self.watch(table, "cursor_row", lambda: self._choose(table.chosen), init=False)
        table.focus()
        self.post_message(self.Ready())

    def on_screen_resume(self) -> None:
        self.post_message(self.BackOnTop())

    def on_resize(self, event: Resize) -> None:
        self._fit_works(event.size.width)

    def _fit_works(self, width: int) -> None:
        # Below COMPACT_BELOW columns the full table leaves the curve a sliver: drop its tokens and cost.
        table = self.query_one_optional(WorksTable)
        if table is not None:  # a stop signal can close the app before the screen composed
            table.set_compact(width < COMPACT_BELOW)

    def take(self, event: ev.Event) -> None:
        self.queue.append(event)

    def hide_hint(self) -> bool:
        """Hide the first-start hint; True when it was showing."""
        if not self.hinting:
            return False
        self.hinting = False
        self.query_one("#hint").display = False
        return True

    # -- events in, panes out ------------------------------------------------------------

    def flush(self, force: bool = False) -> None:
        """Render the queued events and redraw the panes they touched, as one frame (`force`: every pane)."""
        if not self.queue and not self._dirty and not force:
            return
        now = time.monotonic()
        if not force and now - self._last_input() < KEYS_HOLD and now - self._drawn < HOLD_MAX:
            return  # keys are coming: the stream waits for a pause in them
        self._drawn = now
        try:
            with self.app.batch_update():
                self._redraw(self._take_dirty(force))
        except NoMatches:
            pass  # the app is closing and its panes are already gone

    def _take_dirty(self, force: bool) -> set[str]:
        """Feed the queued events to the output and say which panes they (and the clock) changed."""
        dirty, self._dirty = self._dirty | (EVERYTHING if force else set()), set()
        while self.queue:
            event = self.queue.popleft()
            self.feed.feed(event)
            if event.kind == "delta":
                continue
            dirty |= TOUCHES.get(event.kind, frozenset())
            notice = notice_of(event)
            if notice is not None:
                self.app.notify(notice.message, severity=notice.severity, timeout=6)  # type: ignore[arg-type]
        # The header's counts move with nearly every event, and the second's tick draws them:
        # drawn on every flush they cost each streamed frame the screen's top line. A change of
        # state (a review waits, a pause, a rate limit) is drawn at once.
        if self._state_shown != header_state(self.view):
            dirty.add("header")
        if force and not self.view.active and self.view.ended is not None:
            dirty.add("summary")
        return dirty

    def _redraw(self, dirty: set[str]) -> None:
        self.draw_panels(dirty)
        live = self.query_one(LiveOutput)
        if self.selected_work in self.feed.grown:
            live.catch_up()
        live.catch_up_kept(self.feed.grown)  # in this frame, not in the key that goes back to one
        self.feed.grown.clear()
        if "report" in dirty:
            self.refresh_report()
        if "pool" in dirty:
            self.read_pool()
        if "summary" in dirty:
            self.show_summary()
        if "header" in dirty:
            self.draw_header()
        elif "works" in dirty and self.selected_work is not None:
            # A stage began or ended: the box's foot says so now, not at the next second's tick,
            # which a stage shorter than a second (a fast writer's call) could fall between.
            self._subtitle(work_time(self.view, self.selected_work))

    def draw_panels(self, dirty: set[str]) -> None:
        """Bring the works table and the loss curve up to the run, if an event changed them."""
        view = self.view
        if "works" in dirty:
            self.query_one(WorksTable).show(view.works.values())
        if "curve" in dirty:
            series: dict[str, dict[StepKey, float]] = {name: {} for name in view.works}
            for key, step in view.steps.items():
                for name, loss in step.losses.items():
                    series.setdefault(name, {})[key] = loss
            self.query_one(LossCurve).show(list(view.steps), series, step_means(view), val_means(view))

    def show_summary(self) -> None:
        self.query_one(EndSummary).follow(self.view)
        self.refresh_bindings()  # the fold key comes and goes with the summary

    def tick(self) -> None:
        """The second's redraw of the header (its counts, its clock) and the works box: drawn by the next flush."""
        self._dirty.add("header")

    def draw_header(self) -> None:
        header = self.query_one_optional(RunHeader)
        if header is None:
            return  # the app is closing
        if self.selected_work is not None:
            self._subtitle(work_time(self.view, self.selected_work))
        driver = getattr(self.app, "driver", None)
        # The driver knows of a pause at the key, the run only once the trainer said so.
        paused = driver is not None and driver.paused
        header.facts = header_facts(self.view, elapsed=self._clock() - self._started, paused=paused)
        self._state_shown = header_state(self.view)

    # -- selection -----------------------------------------------------------------------

    @on(WorksTable.WorkChosen)
    def _work_chosen(self, message: WorksTable.WorkChosen) -> None:
        self._choose(message.work)  # the first row's highlight, before any cursor moved

    def _choose(self, work: str | None) -> None:
        if work is not None:
            self.selected_work = work

    def watch_selected_work(self, work: str | None) -> None:
        self.query_one(LiveOutput).follow(work, self.feed.buffer(work) if work else None)
        self.query_one(LossCurve).selected = work
        # The works table's cursor and the curve's legend name the work; a tab label that
        # changed width on every move would cost a layout of the whole screen each time.
        self._subtitle(work_time(self.view, work))
        self._report_pin = None
        self.refresh_report()

    def _subtitle(self, text: str) -> None:
        self.query_one(WorksBox).name_work(text)

    def jump_to_work(self, name: str) -> None:
        self.query_one(WorksTable).choose(name)
        self.show_pane("output")

    def action_side_by_side(self) -> None:
        """`s`: the selected work's episodes next to the human ones, of the step its report pane shows."""
        work = self.selected_work
        keys = self.view.loss_steps(work) if work else []
        key = self._report_pin if self._report_pin in keys else (keys[-1] if keys else None)
        open_side_by_side(self.app, self.view.run_dir, work, key)

    def action_search_output(self) -> None:
        self.show_pane("output")
        self.query_one(LiveOutput).ask_search()

    def show_pane(self, pane: str) -> None:
        """Show a pane and put the keys where that pane needs them (the tree, the commit list)."""
        if pane not in PANES:
            return
        self.query_one(TabbedContent).active = pane
        focus = {"pool": "#pool-tree", "commits": "#commit-list"}.get(pane, "#works")
        self.query_one(focus).focus()

    @on(TabbedContent.TabActivated, "#panes")
    def _pane_shown(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "report":
            self.refresh_report()
        elif event.pane.id in ("pool", "commits"):
            self.draw_pool()
