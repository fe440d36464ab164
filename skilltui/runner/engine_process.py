"""The live app's trainer in a process of its own, so the screen answers keys while works stream.

Why a process: with the trainer in the app's event loop, every stage's Python work (prompts,
sandboxes, event records, scoring, git) ran between a key and its frame, and the threads
doing the rest held the one interpreter lock. The key bench (`bench/bench_tui.py`) measured
p95 key latency at 1.3-1.7x idle with 16 works streaming; the same stream drawn with the
engine's cost taken away measured 1.04x. So the app forks: the child trains with the same
`RunDriver` as `--auto` (it alone writes `events.jsonl`), and the app folds the events it is
sent into its own `RunView` and draws them.

The wire between the two is `wire.py` and `messages.py`; the child's side is `trainer_child.py`.
A review crosses it once (`messages.ReviewAsked`): this side folds the event it derives from
it, so "a review waits, and which" is its view's `pending_review`, as in the child's.
A line from the child that does not parse stops the child as "failed" with that line's problem.

Nothing is lost whichever side dies:

- the app quits, closes or crashes: it tells the child to stop (as "failed" for a crash, with
  the traceback file named) and waits for it to record the end;
- the app is killed: the commands pipe closes, the child stops and records why;
- the child dies: the app sees the events pipe close with no `run_finished` on record and
  writes one itself ("failed", naming `engine.log`); it is the only writer once the child is gone.

Forked, not spawned, so the child inherits the opened run and the backend as they are (see
`trainer_child.py`). Where there is no fork (Windows), `make_driver` trains in the app's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from ..core.json_read import loads
from ..model import bus as bus_events
from ..model import events as ev
from ..model.parse import parse_event
from ..model.review import Reviewer, ReviewRequest
from .driver import Backend, Driver, OpenedRun, Outcome, RunDriver, RunFold, crash_reason, save_crash
from .messages import (
    Answer,
    ForApp,
    ForTrainer,
    Held,
    Pause,
    Resume,
    ReviewAsked,
    Stop,
    WireError,
    key_of,
    line_of,
    parse_for_app,
)
from .trainer_child import LOG_NAME, Job, run_child
from .wire import read_lines, write_all

CLOSE_SECONDS = 15.0  # how long the app waits for a stopping child to record its end


def make_driver(opened: OpenedRun, backend: Backend, reviewer: Reviewer, *, secrets: list[str]) -> Driver:
    """The app's driver: the trainer in a child process where the system can fork, else in the app's loop."""
    if hasattr(os, "fork"):
        return ProcessDriver(opened, backend, reviewer, secrets=secrets)
    return RunDriver(opened, backend, reviewer, secrets=secrets)


def _last_record(path: Path) -> dict[str, Any] | None:
    """The last complete record in an events file (None when there is none)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 65536))
            tail = f.read().splitlines()
    except OSError:
        return None
    for raw in reversed(tail):
        with contextlib.suppress(ValueError):
            record = loads(raw)
            return record if isinstance(record, dict) else None
    return None


# -- the app's side -------------------------------------------------------------------------


class ProcessDriver(RunFold):
    """The `Driver` the app holds, for a trainer that runs in a forked child.

    `view` is the run so far, folded here from what the child sends; `bus` carries those
    events to the app's sinks (and lets tests put events in as if the child had sent them).
    """

    keep_history = True  # the child starts from it, with nothing to read again

    def __init__(self, opened: OpenedRun, backend: Backend, reviewer: Reviewer, *, secrets: list[str]) -> None:
        super().__init__(opened)
        self.paused = False
        self.held = 0  # stages of the child waiting at the pause gate
        self._backend, self._reviewer, self._secrets = backend, reviewer, secrets
        self._pid: int | None = None  # the child while it lives (None once reaped)
        self._status: int | None = None  # its wait status, once reaped
        self._reaping = threading.Lock()
        self._forked = False
        self._commands: int | None = None
        self._stop: tuple[str, str] | None = None  # (reason, status) once a stop was asked for
        # The reviewer answering the review the view says waits (the engine asks one at a time);
        # held to be cancelled when the child goes, and so the loop does not drop it midway.
        self._answering: asyncio.Task[None] | None = None
        self.bus.subscribe(self._fold)

    @property
    def pid(self) -> int | None:
        """The trainer's process while it runs (what a benchmark adds to the app's memory)."""
        return self._pid

    # -- running the child ------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Fork the trainer and fold what it sends until it ends; the record says how it ended."""
        self.read_history()
        if self._stop is not None:  # stopped before it started: there is no child to say so
            self.stopped_now()
            assert self.outcome is not None
            return self.outcome
        events_r, events_w = os.pipe()
        commands_r, commands_w = os.pipe()
        with warnings.catch_warnings():
            # Python 3.12+ warns about forking a process with threads; the child never touches
            # what they held (it trains on a fresh thread, with its own loop and stdio).
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        self._forked = True
        if pid == 0:  # the child: never returns into the app's stack
            os.close(events_r)
            os.close(commands_w)
            job = Job(self.opened, self._backend, self._secrets, self.history or [], self.paused)
            run_child(job, commands_r, events_w)
        os.close(events_w)
        os.close(commands_r)
        self._pid, self._commands = pid, commands_w
        self.history = None  # the child has it; the view holds what it said
        reader, transport = await read_lines(events_r)
        try:
            while line := await reader.readline():
                try:
                    message = parse_for_app(line)
                except WireError as exc:
                    self._refuse(exc)
                    continue
                self._take(message)
        finally:
            transport.close()
            self._stop_answering()
        status = await asyncio.to_thread(self._reap, None)
        self._after_child(status)
        assert self.outcome is not None
        return self.outcome

    def _take(self, message: ForApp) -> None:
        if isinstance(message, ev.Event):
            if isinstance(message, ev.RunFinished) and self.outcome is not None:
                return  # the app already said how this session ended (it asked for the stop)
            self.bus.emit(message)
        elif isinstance(message, ReviewAsked):
            self.bus.emit(message.event)  # folded before the reviewer is asked: the view says it waits
            self._stop_answering()
            self._answering = asyncio.create_task(self._answer(message.request))
        elif isinstance(message, Held):
            self.held = message.n

    def _refuse(self, exc: WireError) -> None:
        """A line from the child this side cannot read: stop it as failed, saying what was wrong (once)."""
        if self._stop is None:
            self.stop(f"the app could not read a message from the engine process: {exc}", "failed")

    async def _answer(self, request: ReviewRequest) -> None:
        key = key_of(request)
        try:
            decision = await self._reviewer.review(request)
        except Exception as exc:  # noqa: BLE001 - the child fails the run on record with this
            self._send(Answer(key, error=f"{type(exc).__name__}: {exc}"))
        else:
            self._send(Answer(key, decision))

    def _stop_answering(self) -> None:
        if self._answering is not None:
            self._answering.cancel()
            self._answering = None

    def _send(self, message: ForTrainer) -> None:
        if self._commands is None:
            return
        try:
            write_all(self._commands, line_of(message))
        except OSError:
            pass  # the child is gone; its end is recorded when its pipe closes

    # -- control ----------------------------------------------------------------------------

    def pause(self) -> None:
        """Hold the child before its next stage (a child not forked yet starts paused)."""
        self.paused = True
        self._send(Pause())

    def resume(self) -> None:
        self.paused = False
        self._send(Resume())

    def stop(self, reason: str, status: str = "stopped") -> None:
        """Stop the child where it is; it records `status` with `reason` before it exits."""
        if self._stop is None:
            self._stop = (reason, status)
        self._send(Stop(*self._stop))

    def stopped_now(self, reason: str | None = None) -> None:
        """Say here, now, that the session ended; the child writes the record as it stops."""
        reason, status = self._stop or (reason or "stopped", "stopped")
        if not self._forked and self.outcome is None:
            self._record(status, reason)  # no child ever ran: the record is this side's to write
        self._finish(status, reason)

    def crashed(self, exc: BaseException) -> Path:
        """The app died of `exc`: keep its traceback, stop the child as failed, say so here."""
        self.crash_file = save_crash(self.run_dir, exc)
        reason = crash_reason(exc, self.crash_file)
        self._stop = None
        self.stop(reason, "failed")
        self.stopped_now(reason)
        return self.crash_file

    def _finish(self, status: str, reason: str) -> None:
        if self.outcome is None:
            self.bus.emit(self._finished(status, reason))

    def _finished(self, status: str, reason: str) -> ev.RunFinished:
        return ev.RunFinished(status=status, reason=reason, epochs_done=self.view.epochs_done, cost_usd=self.view.cost)

    def _record(self, status: str, reason: str) -> None:
        sink = bus_events.JsonlSink(self.opened.run.events_path)  # it also cuts off a line the child left half-written
        try:
            sink(self._finished(status, reason))
        finally:
            sink.close()

    # -- the end of the child ---------------------------------------------------------------

    def _reap(self, timeout: float | None) -> int | None:
        """Wait for the child to exit (at most `timeout` seconds); its wait status, None if it runs on.

        Two callers can wait at once: the run's thread once the child's pipe closes, and the
        app's `close()` as it unmounts. One of them reaps the child; the other gets the same
        status (a second `waitpid` would find no child, or be handed None for a pid).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._reaping:
                if self._pid is None:
                    return self._status
                try:
                    pid, status = os.waitpid(self._pid, os.WNOHANG)
                except ChildProcessError:
                    pid, status = self._pid, 0  # reaped by someone else than this driver
                if pid:
                    self._pid, self._status = None, status
                    return status
            if deadline is not None and time.monotonic() > deadline:
                return None
            time.sleep(0.01)

    def _after_child(self, status: int | None) -> None:
        """The child is gone: if it did not record its end, record it for it."""
        if self._commands is not None:
            os.close(self._commands)
            self._commands = None
        last = _last_record(self.opened.run.events_path)
        if last is not None and last.get("kind") == "run_finished":
            log = self.run_dir / LOG_NAME
            with contextlib.suppress(OSError):
                if log.stat().st_size == 0:
                    log.unlink()  # it ended well with nothing to say: no empty file in the run folder
            if self.outcome is None:  # it did, but the app never read that far
                self.bus.emit(parse_event(last))
            return
        if self._stop is not None:
            reason, kind = self._stop
        else:
            how = (
                f"was killed by signal {os.WTERMSIG(status)}"
                if status is not None and os.WIFSIGNALED(status)
                else "ended without recording why"
            )
            reason, kind = (
                f"the engine process {how}; its output is in {self.run_dir / LOG_NAME}; {self.opened.resume}",
                "failed",
            )
        self._record(kind, reason)
        self._finish(kind, reason)

    def close(self) -> None:
        """Stop the child if it still runs, wait for it to record its end, and release the pipes."""
        self._stop_answering()
        if self._pid is None:
            if self._commands is not None:
                os.close(self._commands)
                self._commands = None
            return
        if self._stop is None:
            self.stop(f"the app closed; {self.opened.resume}")
        status = self._reap(CLOSE_SECONDS)
        if status is None and (pid := self._pid) is not None:
            # It would not stop: nothing more it writes can be trusted to finish.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            status = self._reap(None)
        self._after_child(status)
