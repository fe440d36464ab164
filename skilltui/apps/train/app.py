"""The terminal app: watch a training run live and review every backward micro-step.

`skilltui train` (without --auto, on a terminal) and `skilltui demo` open it. It composes
the screens and routes messages; it adds no training logic and keeps no fold of the run:

- the trainer runs in a process of its own (`drivers.engine_process`): it writes
  `events.jsonl`, and the app folds every event it sends into the run model (`RunView`), so
  the engine's work never stands between a key and its frame;
- the main screen (`screens/main.py`) renders that model; its panes read the pool in threads;
- review requests are answered by the review screen, through the one review coordinator
  the app holds (`reviewer.py`), so only the micro-step waits, never the screen.

Quitting while the run trains asks first, then stops the trainer where it is; the record
says "stopped" and the same command resumes. If the app itself dies of a bug, the
traceback goes to the run folder, the record says "failed", and the shell gets exit 1.

    skilltui demo                                   # the bundled works, offline
    skilltui train --work WORK [--offline-latency 0.3]
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.events import Key
from textual.screen import Screen
from textual.worker import Worker

from ...core.signals import exit_code, name_of
from ...drivers.driver import Backend, Driver, OpenedRun, Outcome
from ...drivers.engine_process import make_driver
from ...model.parse import read_run
from ...model.summary import summarise
from ..shared import keymap, terminal_guard, themes
from ..shared.palette import kept_textual_commands
from ..shared.screens.confirm import ConfirmScreen
from ..shared.screens.help import HelpScreen
from .collector import QuietCollector, settle_heap
from .palette import WorkCommands, copy_run_path, training_commands
from .pool_reader import PoolReader
from .reviewer import ReviewCoordinator, ScreenReviewer
from .screens.main import MainScreen, pace_frames
from .screens.main_layout import MAIN_CSS, PANES
from .stop_signals import StopSignals
from .widgets.end_summary import EndSummary

HINT_SEEN = "hint-seen"
INTRO = "Every micro-step waits for your review: a approves, r reruns, u rolls back."


def hint_seen_path() -> Path:
    return themes.config_dir() / HINT_SEEN


class TrainingApp(App[int]):
    """Train one opened run with a person reviewing every micro-step. Returns the exit code."""

    TITLE = "skilltui"
    CSS = MAIN_CSS
    BINDINGS = [
        *keymap.bindings("train"),
        # 1 to 4 show the panes in their tabs' order, so a key cannot point at a pane that moved.
        *(Binding(str(n), f"show_pane('{pane}')", pane.title(), show=False) for n, pane in enumerate(PANES, 1)),
    ]
    COMMANDS = App.COMMANDS | {WorkCommands}

    def __init__(
        self,
        opened: OpenedRun,
        backend: Backend,
        *,
        secrets: list[str],
        clock: Callable[[], float] = time.monotonic,
        hint: bool | None = None,
    ) -> None:
        terminal_guard.install()  # agent text never drives the terminal, whichever widget shows it
        pace_frames()
        super().__init__()
        self.opened = opened
        self.run_dir = opened.run.root
        # The reviewer asks the coordinator, made below: it needs the view the driver folds.
        reviewer = ScreenReviewer(lambda request: self.reviews.ask(request))
        self.driver: Driver = make_driver(opened, backend, reviewer, secrets=secrets)
        self.view = self.driver.view
        self.bus = self.driver.bus
        show_hint = not hint_seen_path().exists() if hint is None else hint
        self.main = MainScreen(
            self.view,
            PoolReader(opened.run.memory),
            hint=show_hint,
            clock=clock,
            last_input=lambda: self.collector.last_input,
        )
        self.driver.subscribe(self.main.take)
        self.reviews = ReviewCoordinator(
            self, self.view, hinting=lambda: self.main.hinting, changed=self.update_bindings
        )
        self.signals = StopSignals()
        self._trainer_worker: Worker | None = None
        self._theme_problems: list[str] = []
        self._bindings_key: tuple[bool, bool, bool] | None = None
        self.stopped_by: int | None = None
        self.crash_file: Path | None = None
        self.collector = QuietCollector()

    def get_default_screen(self) -> Screen:
        return self.main

    @property
    def selected_work(self) -> str | None:
        return self.main.selected_work

    @property
    def outcome(self) -> Outcome | None:
        return self.driver.outcome

    def on_mount(self) -> None:
        self._install_themes()
        self.signals.watch(self._on_stop_signal)
        self.collector.start()
        self.set_interval(0.25, self.collector.tick)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.collector.touched()
        await super().on_event(event)

    def on_main_screen_back_on_top(self) -> None:
        self.reviews.open_queued()

    def show_review(self) -> None:
        self.reviews.show()

    def on_main_screen_ready(self) -> None:
        # Textual's WorkType union leaves mypy no one result type for an async def that returns None
        # unless the result is assigned to a Worker, as the trainer's is; nothing keeps this one.
        self.run_worker(self._boot, group="boot")  # type: ignore[arg-type]

    def _on_stop_signal(self, signum: int) -> None:
        self.stopped_by = self.stopped_by or signum
        self.stop_training(f"stopped by {name_of(signum)}")
        self.exit(exit_code(signum))

    def on_unmount(self) -> None:
        self.signals.unwatch()
        self.collector.stop()
        # However the app ends, the trainer stops with it and the record says so before
        # the run's events file is closed.
        self.stop_training(f"the app closed; {self.opened.resume}")
        self.driver.close()

    def _handle_exception(self, error: Exception) -> None:
        """A bug killed the app: keep the traceback in the run folder, record the run as failed, exit 1."""
        if self.crash_file is None:
            self.crash_file = self.driver.crashed(error)
        super()._handle_exception(error)
        self._exit_renderables.clear()  # the traceback is in the file; the shell gets one line (run_app)

    # -- themes --------------------------------------------------------------------------

    def _install_themes(self) -> None:
        loaded = themes.load_themes()
        for theme in loaded.themes:
            self.register_theme(theme)
        self.own_themes = sorted({theme.name for theme in loaded.themes})
        self._theme_problems = loaded.problems
        for problem in loaded.problems:
            self.notify(problem, title="theme skipped", severity="warning", timeout=8)
        wanted = themes.remembered_theme()
        self.theme = wanted if wanted in self.available_themes else themes.DEFAULT_THEME
        self.theme_changed_signal.subscribe(self, lambda theme: themes.remember_theme(theme.name))

    def action_toggle_theme(self) -> None:
        self.theme = themes.LIGHT_THEME if self.current_theme.dark else themes.DEFAULT_THEME

    # -- the run -------------------------------------------------------------------------

    async def _boot(self) -> None:
        """Fold what earlier sessions of this run recorded, then start training."""
        record = await asyncio.to_thread(read_run, self.opened.run.events_path)
        self.driver.read_history(record.events)
        self.main.feed.recall(record.events)
        self.main.flush(force=True)
        # The screens, their widgets and the run's history live as long as the app: set them
        # aside from the collector too, or every full collection walks them again mid-run.
        settle_heap()
        if self.outcome is None:  # the person may have quit while the history was read
            self._trainer_worker = self.run_worker(self._train, name="trainer", group="trainer", exit_on_error=False)

    async def _train(self) -> None:
        await self.driver.run()
        # The run is over, though the app stays open on its last screen: let `skilltui
        # review` and its revert and reset see a finished run, not one still being trained.
        if self.outcome is not None:
            self.opened.lock.release()
        self.update_bindings()

    @property
    def training(self) -> bool:
        """True while the trainer runs (or is about to start)."""
        return self.outcome is None

    @property
    def exit_code(self) -> int:
        return 1 if self.outcome is not None and self.outcome.status == "failed" else 0

    def stop_training(self, reason: str) -> None:
        """Stop the trainer where it is and say so on record now; the same command resumes the run."""
        if self.outcome is not None:
            return
        self.driver.stop(reason)
        if self._trainer_worker is not None:
            self._trainer_worker.cancel()
        self.driver.stopped_now(reason)

    # -- keys ----------------------------------------------------------------------------

    def on_key(self, event: Key) -> None:
        if self.main.hide_hint():
            try:
                hint_seen_path().parent.mkdir(parents=True, exist_ok=True)
                hint_seen_path().touch()
            except OSError:
                pass  # the hint shows again next time; nothing else depends on it
            self.call_later(self.show_review)

    def action_show_pane(self, pane: str) -> None:
        self.main.show_pane(pane)

    def action_open_review(self) -> None:
        self.reviews.show()

    def action_report_step(self, delta: int) -> None:
        if self.selected_work is not None and self.view.loss_steps(self.selected_work):
            self.main.show_pane("report")
            self.main.report_step(delta)

    def update_bindings(self) -> None:
        """Refresh the key bar only when what it offers changed (pause, resume, a waiting review)."""
        key = (self.training, self.driver.paused, self.reviews.asking is not None)
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pause":
            return self.training and not self.driver.paused
        if action == "resume":
            return self.training and self.driver.paused
        if action == "open_review":
            return self.reviews.can_open()
        if action == "fold_summary":  # offered only while the main screen shows a summary
            return self.screen is self.main and any(s.display for s in self.main.query(EndSummary))
        return True

    def action_fold_summary(self) -> None:
        self.main.query_one(EndSummary).toggle()

    def action_pause(self) -> None:
        if self.training:
            self.driver.pause()
            self.notify("Pausing: calls in flight finish, the next stage waits for resume (p).", timeout=4)
            self.main.draw_header()  # the header answers the key now, not when the trainer does
        self.update_bindings()

    def action_resume(self) -> None:
        if self.training:
            self.driver.resume()
            self.main.draw_header()
        self.update_bindings()

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        from .screens.review import ReviewScreen
        from .screens.side_by_side import SideBySideScreen

        # The keys of the screen the person is on come first, in sight without scrolling at 80x24.
        order = ("main", "review", "side")
        if isinstance(self.screen, ReviewScreen):
            order = ("review", "main", "side")
        elif isinstance(self.screen, SideBySideScreen):
            order = ("side", "main", "review")
        self.push_screen(HelpScreen("skilltui keys", order, f"{INTRO} After quitting, {self.opened.resume}."))

    def action_copy_run_path(self) -> None:
        copy_run_path(self)

    async def action_quit(self) -> None:
        if not self.training:
            self.exit(self.exit_code)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.stop_training(f"quit from the app; {self.opened.resume}")
                self.exit(self.exit_code)

        self.push_screen(
            ConfirmScreen(
                "Stop training and quit?",
                # The run's own resume line: a demo's names the `train` command (`demo` again starts anew).
                f"Finished stages are kept; calls in flight are dropped. {sentence(self.opened.resume)}.",
                yes="y  quit",
            ),
            answered,
        )

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from kept_textual_commands(super().get_system_commands(screen))
        yield from training_commands(self)


def sentence(text: str) -> str:
    """`text` with its first letter in capitals, to open a sentence of a dialog."""
    return text[:1].upper() + text[1:]


def run_app(opened: OpenedRun, backend: Backend, *, secrets: list[str], hint: bool | None = None) -> int:
    """Run the app until the person quits, then print the summary. 0: finished, stopped or quit; 1: failed."""
    return run_training_app(TrainingApp(opened, backend, secrets=secrets, hint=hint))


def run_training_app(app: TrainingApp) -> int:
    """`run_app` for an app already made (`skilltui train` makes it first, so an app that cannot
    even be made stops the command before anything trains)."""
    settle_heap()
    app.run()
    if app.crash_file is not None:
        print(f"skilltui: the app crashed; the run is recorded as failed; traceback: {app.crash_file}", file=sys.stderr)
        return 1
    lines = summarise(app.view).lines()
    if app.stopped_by is not None:
        # The last line (stderr) says the stop and how to resume; the summary's first line
        # would say the same stop once more, so it is left out.
        print("\n".join(lines[1:]))
        print(f"skilltui: run stopped by {name_of(app.stopped_by)}; {app.opened.resume}", file=sys.stderr)
        return exit_code(app.stopped_by)
    print("\n".join(lines))
    outcome = app.outcome
    if outcome is not None and outcome.status == "failed":
        print(f"skilltui: run failed: {outcome.reason}", file=sys.stderr)
        return 1
    return 0  # stopped (quit): the summary's first line says so, with how to resume
