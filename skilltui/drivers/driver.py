"""The run driver: one place that wires the trainer, the run's events file, the view and the sinks.

`--auto` and the live app both train through it, so what a run records does not depend on
who watches. Its promise is that every session ends with exactly one `run_finished` in
`events.jsonl`, whatever ends it:

- the trainer finished, stopped or failed: the trainer says so itself;
- someone stopped it (`stop`): "stopped" with their reason, even if the task is then
  cancelled mid-stage;
- the task was cancelled with no stop asked for: "interrupted";
- the trainer raised (a bug): "failed", and the traceback is kept in the run folder
  (`crash-*.txt`), named in the reason;
- the app around it crashed (`crashed`): "failed", the same way.

The driver folds every event into its `view` before any sink sees it, so a sink that
renders the view always renders the event it was just given.

`Driver` is the control surface the live app holds: this driver has it, and so has the
app's `engine_process.ProcessDriver`, whose trainer runs in a process of its own.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..agents.base import Backend
from ..engine.loop import Outcome, Trainer
from ..engine.opening import OpenedRun
from ..model import bus as bus_events
from ..model import events as ev
from ..model.parse import read_run
from ..model.review import Reviewer
from ..model.view import RunView

# What an app needs of the engine to drive a run, in one place: apps import these from here
# (the review protocol's types are the run model's own, in `.review`).
__all__ = ["Backend", "Driver", "OpenedRun", "Outcome", "RunDriver", "RunFold", "save_crash"]


def save_crash(run_dir: Path, exc: BaseException) -> Path:
    """Write a traceback into the run folder; returns the file (a temp file when the folder refuses)."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S")
    text = "".join(traceback.format_exception(exc))
    path = Path(run_dir) / f"crash-{stamp}.txt"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError:
        import tempfile

        with tempfile.NamedTemporaryFile("w", prefix="skilltui-crash-", suffix=".txt", delete=False) as f:
            f.write(text)
        path = Path(f.name)
    return path


def crash_reason(exc: BaseException, path: Path) -> str:
    return f"{type(exc).__name__}: {exc} (a bug; the traceback is in {path})"


@runtime_checkable
class Driver(Protocol):
    """What the app holds of a run it trains, wherever the trainer runs.

    Written down so the two drivers cannot drift apart unseen: the app calls only these, and
    `tests/test_wire.py` checks that both drivers have every one of them.
    """

    view: RunView  # the run so far; its `pending_review` is the review that waits, if any
    bus: bus_events.EventBus
    outcome: Outcome | None  # how the session ended, once it did
    crash_file: Path | None

    @property
    def paused(self) -> bool: ...

    @property
    def held(self) -> int:
        """How many stages wait at the pause gate."""
        ...

    def read_history(self, events: list[ev.Event] | None = None) -> RunView: ...

    def subscribe(self, sink: Callable[[ev.Event], None]) -> Callable[[], None]: ...

    async def run(self) -> Outcome:
        """Train until the session ends; the record says how, whatever ended it."""
        ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def stop(self, reason: str, status: str = "stopped") -> None: ...

    def stopped_now(self, reason: str | None = None) -> None:
        """Say now that the session ended (the trainer's task is gone or going)."""
        ...

    def crashed(self, exc: BaseException) -> Path:
        """The app died of `exc`: keep the traceback, record the run as failed; returns the file."""
        ...

    def close(self) -> None: ...


class RunFold:
    """What every driver keeps of the run it drives: its event bus, the fold of each event into
    `view`, how the session ended (`outcome`), and the history folded once before training.

    It subscribes nothing itself: each driver puts its fold where its order needs it (after
    the `events.jsonl` writer, before any interface).
    """

    keep_history = False  # the app's trainer process starts from the history the app read

    def __init__(self, opened: OpenedRun) -> None:
        self.opened = opened
        self.run_dir = opened.run.root
        self.bus = bus_events.EventBus()
        self.view = RunView.of(opened.run.id, opened.run.root, sorted(w.name for w in opened.works))
        self.outcome: Outcome | None = None
        self.crash_file: Path | None = None
        self.history: list[ev.Event] | None = None
        self._history_read = False

    def read_history(self, events: list[ev.Event] | None = None) -> RunView:
        """Fold what earlier sessions recorded (once, before training starts); `events` if already read."""
        if not self._history_read:
            self._history_read = True
            events = read_run(self.opened.run.events_path).events if events is None else events
            self.view.fold(events)
            self.history = events if self.keep_history else None
        return self.view

    def subscribe(self, sink: Callable[[ev.Event], None]) -> Callable[[], None]:
        return self.bus.subscribe(sink)

    def _fold(self, event: ev.Event) -> None:
        self.view.apply(event)
        if isinstance(event, ev.RunFinished) and self.outcome is None:
            self.outcome = Outcome(event.status, event.reason)

    @property
    def finished(self) -> bool:
        return self.outcome is not None


class RunDriver(RunFold):
    """Train one opened run: `await driver.run()`; `close()` when done. `view` is the run so far."""

    def __init__(
        self,
        opened: OpenedRun,
        backend: Backend,
        reviewer: Reviewer,
        *,
        secrets: list[str],
        sinks: tuple[Callable[[ev.Event], None], ...] = (),
    ) -> None:
        super().__init__(opened)
        self.trainer = Trainer(opened, backend, reviewer, self.bus, secrets=secrets)
        self._stop_reason: str | None = None
        self._stop_status = "stopped"
        self._jsonl = bus_events.JsonlSink(opened.run.events_path)
        self.bus.subscribe(self._jsonl)
        self.bus.subscribe(self._fold)
        for sink in sinks:
            self.bus.subscribe(sink)

    # The app's controls (`Driver`), the same on `engine_process.ProcessDriver`.
    def pause(self) -> None:
        self.trainer.pause()

    def resume(self) -> None:
        self.trainer.resume()

    @property
    def paused(self) -> bool:
        return self.trainer.paused

    @property
    def held(self) -> int:
        return self.trainer.held

    async def run(self) -> Outcome:
        """Train until the run ends; the record says how it ended, whatever happened."""
        self.read_history()
        try:
            outcome = await self.trainer.train()
        except asyncio.CancelledError:
            if self._stop_reason is not None:
                self._finish(self._stop_status, self._stop_reason)
            else:
                self._finish("interrupted", f"cancelled while a stage ran; {self.opened.resume}")
            raise
        except Exception as exc:  # noqa: BLE001 - a bug in the engine ends the run on record, with its traceback
            self.crash_file = save_crash(self.run_dir, exc)
            self._finish("failed", crash_reason(exc, self.crash_file))
        else:
            self._finish(outcome.status, outcome.reason)
        assert self.outcome is not None
        return self.outcome

    def stop(self, reason: str, status: str = "stopped") -> None:
        """Stop before the next stage starts; if the task is cancelled too, the record still says `status`.

        `status` is "failed" when what stops the run is a crash around it (the app's, told to an
        engine process), so the record does not pass a bug off as a person's stop.
        """
        if self._stop_reason is None:
            self._stop_reason, self._stop_status = reason, status
        self.trainer.stop(reason)

    def stopped_now(self, reason: str | None = None) -> None:
        """The trainer will not get to say so (its task is gone or going): record "stopped" now."""
        self._finish("stopped", reason or self._stop_reason or "stopped")

    def crashed(self, exc: BaseException) -> Path:
        """The process around the trainer died of `exc`: keep its traceback and record the run as failed."""
        self.crash_file = save_crash(self.run_dir, exc)
        self.trainer.stop("the app crashed")
        self._finish("failed", crash_reason(exc, self.crash_file))
        return self.crash_file

    def _finish(self, status: str, reason: str) -> None:
        if self.outcome is None:
            self.bus.emit(
                ev.RunFinished(
                    status=status,
                    reason=reason,
                    epochs_done=self.view.epochs_done,
                    cost_usd=round(self.trainer.calls.spent, 6),
                )
            )

    def close(self) -> None:
        self._jsonl.close()
