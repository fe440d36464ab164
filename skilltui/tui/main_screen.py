"""The main screen of the live app: the header, the works, the loss curve and the tabbed panes.

It renders the run model and nothing else. The app's event sink only queues events (the
driver has already folded each into the `RunView`); a timer hands the queue to the output
feed every `FLUSH_SECONDS` and redraws just the panes those events touch, so a burst of
streamed text costs one write to the log, not one redraw per delta. While works run, the
works table and the curve are redrawn once a second at most (`PANEL_SECONDS`): each redraw
repaints the top half of the screen, and the keys wait for it. While keys come, that redraw
waits for a pause in them (`KEY_QUIET`), two seconds at most, and what streams in is drawn
in a key's shadow (`drew_key`): just after the frame that showed the key, twice a second.

On the first start (no `hint-seen` file in the config folder) a one-line hint says what the
panes are and that a review will open; the first review waits until a key hid the hint.
When the run ends, the summary (loss first to last step, notes, cost, next commands) is
shown above the keys.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections import deque
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.events import Resize
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static, TabbedContent, TabPane

from ..components import keymap
from ..components.commit_list import CommitList
from ..components.diff_view import DiffView
from ..components.report_view import ReportView
from ..components.run_header import HeaderFacts, RunHeader
from ..model import events as ev
from ..model.figures import (
    duration_text,
    eta,
    run_progress,
    stage_elapsed,
    step_means,
    step_progress,
    val_means,
    work_elapsed,
)
from ..model.notices import notice_of
from ..model.summary import kept_updates, test_delta_text
from ..model.view import RunView
from .output_feed import OutputFeed
from .panes import DiskPanes
from .pool_reader import PoolReader
from .screens.side_by_side import open_side_by_side
from .widgets.end_summary import EndSummary
from .widgets.key_bar import KeyBar
from .widgets.live_output import LiveOutput
from .widgets.loss_curve import LossCurve
from .widgets.note_view import NoteView
from .widgets.pool_size import PoolSize
from .widgets.pool_tree import PoolTree
from .widgets.works_table import COMPACT_BELOW, WorksTable

FLUSH_SECONDS = 0.12
# While works run, the works table and the curve are redrawn at most this often (the output
# follows the stream at FLUSH_SECONDS): each redraw of the table repaints the whole top of
# the screen, and a key pressed meanwhile waits for it. Paused, reviewing or done: at once.
PANEL_SECONDS = 1.0
PANELS = frozenset({"works", "curve"})
# A key's frame should hold the key's effect and little else: while keys come (one in the last
# KEY_QUIET seconds) a redraw of the table and the curve that came due waits, KEY_WAIT_MAX at most.
KEY_QUIET = 0.3
KEY_WAIT_MAX = 2.0
# While keys come, what streams in (and the header's second) is drawn at most this often, in
# a key's shadow (`drew_key`); KEY_FLUSH_LATE late at most when no key casts one.
KEY_FLUSH_SECONDS = 0.5
KEY_FLUSH_LATE = 1.0
PANES = ("output", "report", "pool", "commits")
HINT = (
    "works: one row per work · loss: the curve · below: 1 output, 2 report, 3 pool, 4 commits · "
    "a review screen opens for every update of the notes · any key hides this"
)
# What each kind of event can change on screen; the header redraws every second anyway.
TOUCHES: dict[str, frozenset[str]] = {
    "run_started": frozenset({"works", "curve", "summary"}),  # a resumed run's clears the last banner
    "step_started": frozenset({"works", "curve"}),
    "stage": frozenset({"works"}),
    "episode_written": frozenset({"works"}),
    "call": frozenset({"works"}),
    "loss": frozenset({"works", "curve", "report"}),
    "val_loss": frozenset({"curve"}),
    "step_finished": frozenset({"curve"}),
    "micro_step": frozenset({"pool"}),
    "review_requested": frozenset({"pool"}),
    "decision": frozenset({"pool"}),
    "pool_changed": frozenset({"pool"}),
    "history": frozenset({"pool"}),
    "attribution": frozenset({"pool"}),
    "run_finished": frozenset({"summary"}),
}

# Loaded as the app's CSS: a default screen's own CSS is not read by Textual 8.
MAIN_CSS = """
MainScreen { layout: vertical; }
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
#pool-tree { width: 34; min-width: 34; max-width: 50%; border-right: vkey $panel-lighten-2; }
#commit-list { width: 2fr; min-width: 30; border-right: vkey $panel-lighten-2; }
#commit-diff { width: 3fr; }
#hint, #summary { height: auto; padding: 0 1; background: $boost; color: $text-accent; display: none; }
#summary { color: $foreground; border-bottom: hkey $primary; }
"""


def keys_coming(now: float, last_input: float) -> bool:
    """Whether keys come: one came in the last KEY_QUIET seconds."""
    return now - last_input < KEY_QUIET


def due(now: float, drawn: float, last_input: float, every: float, wait_max: float) -> bool:
    """Whether a redraw last made at `drawn` may be made `now`: `every` seconds after the last,
    and while keys come (`keys_coming`) once it is `wait_max` late."""
    late = now - drawn - every
    return late >= 0 and (not keys_coming(now, last_input) or late >= wait_max)


def panels_due(now: float, drawn: float, last_input: float) -> bool:
    """Whether the works table and the curve, last drawn at `drawn`, may be redrawn `now`."""
    return due(now, drawn, last_input, PANEL_SECONDS, KEY_WAIT_MAX)


def output_due(now: float, drawn: float, last_input: float) -> bool:
    """Whether the flush timer, the last draw of which was at `drawn`, may draw what streamed in `now`.

    Every draw is a frame, and Textual draws at most one a 1/60 s: a key pressed within that
    time of the stream's last frame waited for the next one (the slowest sixth of the keys
    while 16 works streamed). While keys come the stream is drawn in a key's shadow
    (`shadow_due`); this timer draws it only once it is KEY_FLUSH_LATE late. A key that moves
    to another work shows all of its output in its own frame.
    """
    return due(now, drawn, last_input, 0.0, KEY_FLUSH_LATE)


def shadow_due(now: float, drawn: float) -> bool:
    """Whether what streamed in may be drawn `now`, just after a key's frame, the last draw being at `drawn`.

    The frame after a key's is the one least likely to hold up the next key: Textual draws
    that one 1/60 s after the key's, and a person's next key comes later (key repeat is
    about 1/30 s). A frame drawn at any other moment is one the next key may land behind.
    """
    return now - drawn >= KEY_FLUSH_SECONDS


# Drawn at once, keys or not: a pause or resume (the answer to the person's own key), a warning,
# a throttle, a revert or reset, a session's start (it hides the last one's banner), the end.
# All else (the stream, a decision, a commit or a step's end as well) waits while keys come, for
# a key's shadow: the key bench's slowest keys were the first after a review closed, landing
# behind the frame of its decision, which the trainer sends some 50 ms after the key that made it.
AT_ONCE = frozenset({"paused", "warning", "throttle", "history", "run_started", "run_finished"})


def clock_due(now: float, shown: float, last_input: float) -> bool:
    """Whether the works box's clock, last set at `shown`, may be set again by the second's tick.

    Setting it repaints the whole box, table and all (5-7 ms a frame with 16 works), so while
    keys come it waits like the panels: a key that moves the selection sets it in its own frame.
    It is only set when its words change, once a second.
    """
    return due(now, shown, last_input, 0.0, KEY_WAIT_MAX)


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
    ) -> None:
        super().__init__()
        self.view = view
        self.reader = reader
        self.feed = OutputFeed(view)
        self.queue: deque[ev.Event] = deque()
        self.hinting = hint
        self._stale: set[str] = set()
        self._panels_at = 0.0
        self._clock_at = float("-inf")  # when the works box's clock (its subtitle) was last set
        self._owed: set[str] = set()  # what folded events changed and a flush put off drawing
        self._output_at = float("-inf")  # when a flush last drew
        self._clock = clock
        self._started = clock()
        self.init_panes()

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        yield Static(HINT, id="hint")
        yield EndSummary(id="summary")
        with Horizontal(id="top"):
            with Vertical(id="works-box") as box:
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
        self.tick()
        table = self.query_one(WorksTable)
        # The moved cursor and the output it selects in one frame: the table's posted message
        # reached this screen after the frame that drew the cursor, so every key waited for a
        # second frame, 17-33 ms at Textual's 60 a second. A watcher runs in the key's own call.
        self.watch(table, "cursor_coordinate", lambda: self._choose(table.chosen), init=False)
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

    def flush(self, force: bool = False, *, shadow: bool = False) -> None:
        """Render the queued events and redraw the panes they touched (`shadow`: just after a key's frame)."""
        if not self.queue and not force and not self._owed:
            return
        try:
            self._redraw(force, shadow)
        except NoMatches:
            pass  # the app is closing and its panes are already gone

    def key_handled(self) -> None:
        """A key's effect is in place: what the stream owes waits for the frame that shows it."""
        self.call_after_refresh(self.drew_key)

    def drew_key(self) -> None:
        """Just after the frame that showed a key: fold in what streamed in, and draw it if it is due
        (`shadow_due`). Folding here too keeps that work out of the moments a key may land on."""
        if self._owed or self.queue:
            self.flush(shadow=shadow_due(time.monotonic(), self._output_at))

    def _redraw(self, force: bool, shadow: bool = False) -> None:
        dirty = self._owed | ({"works", "curve", "report", "pool", "header"} if force else set())
        urgent = force
        while self.queue:
            event = self.queue.popleft()
            self.feed.feed(event)
            urgent = urgent or event.kind in AT_ONCE
            if event.kind == "delta":
                continue
            dirty |= TOUCHES.get(event.kind, frozenset())
            dirty.add("header")
            notice = notice_of(event)
            if notice is not None:
                self.app.notify(notice.message, severity=notice.severity, timeout=6)  # type: ignore[arg-type]
        if self.selected_work in self.feed.grown:
            dirty.add("output")
        view = self.view
        self._stale |= dirty & PANELS
        now = time.monotonic()
        if not urgent and not shadow and view.status == "running" and not self._output_due(now):
            self._owed = dirty  # folded into the buffers and the view; drawn at the next due flush
            return
        self._owed, self._output_at = set(), now
        if force or view.status != "running" or self._panels_due(now):
            self.draw_panels()
        if self.selected_work in self.feed.grown:
            self.query_one(LiveOutput).catch_up()
        self.feed.grown.clear()
        if "report" in dirty:
            self.refresh_report()
        if "pool" in dirty:
            self.read_pool()
        if "summary" in dirty or (force and not view.active and view.ended is not None):
            self.show_summary()
        if "labels" in dirty:
            self.draw_labels()
        if "header" in dirty:
            self.draw_header(now)

    def labels_changed(self) -> None:
        # A new tab label lays the whole screen out (20-30 ms): while keys come it waits for the stream's draw.
        if self.view.status == "running" and keys_coming(time.monotonic(), self._last_input()):
            self._owed.add("labels")
        else:
            self.draw_labels()

    def _output_due(self, now: float) -> bool:
        return output_due(now, self._output_at, self._last_input())

    def _panels_due(self, now: float) -> bool:
        return panels_due(now, self._panels_at, self._last_input())

    def _last_input(self) -> float:
        return getattr(self.app, "last_input", float("-inf"))

    def draw_panels(self) -> None:
        """Bring the works table and the loss curve up to the run, if an event changed them."""
        self._panels_at = time.monotonic()
        view, stale, self._stale = self.view, self._stale, set()
        if "works" in stale:
            self.query_one(WorksTable).show(view.works.values())
        if "curve" in stale:
            series = {name: {} for name in view.works}
            for key, step in view.steps.items():
                for name, loss in step.losses.items():
                    series.setdefault(name, {})[key] = loss
            self.query_one(LossCurve).show(list(view.steps), series, step_means(view), val_means(view))

    def show_summary(self) -> None:
        self.query_one(EndSummary).follow(self.view)
        self.refresh_bindings()  # the fold key comes and goes with the summary

    def work_time(self, work: str | None) -> str:
        """`harbour · forward 42s · in step 1m05s` while the selected work runs a stage; its name otherwise."""
        row = self.view.works.get(work) if work else None
        now = _dt.datetime.now(_dt.UTC)
        stage = stage_elapsed(row, now) if row is not None else None
        if row is None or stage is None:
            return work or ""
        return f"{row.name} · {row.stage} {duration_text(stage)} · in step {duration_text(work_elapsed(row, now))}"

    def tick(self) -> None:
        """The second's redraw of the header, the clock and panels come due.

        While keys come it is drawn with the stream's flush (`output_due`, `shadow_due`), not as
        a frame of its own that a key could land just behind.
        """
        now = time.monotonic()
        if self.view.status == "running" and not self._output_due(now):
            self._owed.add("header")
            return
        self._output_at = now
        self.draw_header(now)

    def draw_header(self, now: float) -> None:
        v, driver = self.view, getattr(self.app, "driver", None)
        header = self.query_one_optional(RunHeader)
        if header is None:
            return  # the app is closing
        if self._stale and self._panels_due(now):
            self.draw_panels()
        if self.selected_work is not None and clock_due(now, self._clock_at, self._last_input()):
            self._subtitle(self.work_time(self.selected_work))
        step = v.step
        (done, total), (steps_done, steps_total) = step_progress(v), run_progress(v)
        left = eta(v, _dt.datetime.now(_dt.UTC))
        when = ""
        if left.step is not None and v.status != "review":  # what a person takes to review is not the machine's
            when = f"ETA {duration_text(left.step)}" + (f" · run {duration_text(left.run)}" if left.run else "")
        header.facts = HeaderFacts(
            run_id=v.run_id,
            epoch=step.key[0] if step else None,
            step=step.key[1] if step else None,
            first=step.first if step else None,
            last=step.last if step else None,
            elapsed=self._clock() - self._started,
            tokens=v.tokens,
            cost=v.cost,
            cost_known=v.cost_known,
            status=v.status,
            paused=v.paused or (driver is not None and driver.paused),  # the driver knows at the key, the run after
            throttled=v.throttled,
            batch=v.batch,
            stages_done=done,
            stages_total=total,
            steps_done=steps_done,
            steps_total=steps_total,
            eta=when,
            kept=kept_updates(v)[0],
            test=test_delta_text(v) or "",
        )

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
        self._subtitle(self.work_time(work))
        self._report_pin = None
        self.refresh_report()

    def _subtitle(self, text: str) -> None:
        # Set only when it changes: each set repaints the whole works box, table and all.
        box = self.query_one("#works-box")
        self._clock_at = time.monotonic()
        if box.border_subtitle != text:
            box.border_subtitle = text

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
