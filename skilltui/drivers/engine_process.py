"""The live app's trainer in a process of its own, so the screen answers keys while works stream.

Why a process: in the app's event loop, every stage's Python work (prompts, sandboxes, event
records, scoring, git) would run between a key and its frame, and the threads doing the rest
would hold the one interpreter lock; the key bench (`bench/bench_tui.py`) shows the cost
(docs/benchmarks.md, "The app's frames"). So the app starts a trainer process
(`trainer_child.main`): it trains with the same `RunDriver` as `--auto` (it alone writes
`events.jsonl`), and the app folds the events it is sent into its own `RunView` and draws them.

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

Started, not forked: a fork of the app (which has threads: git readers, Textual's driver)
copies whatever those threads held at that instant. The child is a fresh interpreter in a
process group of its own, handed the opened run and the backend as one pickle (`job.py`),
with two pipes of its own (`pass_fds`) and nothing else of the app's. Where there is no
POSIX (Windows), `make_driver` trains in the app's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..core.json_read import loads
from ..model import bus as bus_events
from ..model import events as ev
from ..model.parse import parse_event
from ..model.review import Reviewer, ReviewRequest
from .driver import Backend, Driver, OpenedRun, Outcome, RunDriver, RunFold, crash_reason, save_crash
from .job import Job, child_env, dump_job
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
from .trainer_child import LOG_NAME
from .wire import read_lines, write_all

# `-c`, not `-m`: the scoring pool's workers start by importing the main module of the process
# that made them unless it is a script-less `-c`, and the trainer's would pull in the whole engine.
CHILD_MAIN = "import sys; from skilltui.drivers.trainer_child import main; main(sys.argv)"
CLOSE_SECONDS = 15.0  # how long the app waits for a stopping child to record its end

# Where `make_driver` puts the trainer: True trains in the app's own event loop (`RunDriver`),
# False in a process of its own. Off POSIX there is no process to start. The test suite sets
# it (tests/conftest.py): the app holds either driver through the same `Driver` surface, and a
# trainer interpreter started for every app test costs more than most of the tests do.
IN_APP_LOOP = os.name != "posix"


def make_driver(opened: OpenedRun, backend: Backend, reviewer: Reviewer, *, secrets: list[str]) -> Driver:
    """The app's driver: the trainer in a process of its own, or in the app's loop (`IN_APP_LOOP`)."""
    if IN_APP_LOOP:
        return RunDriver(opened, backend, reviewer, secrets=secrets)
    return ProcessDriver(opened, backend, reviewer, secrets=secrets)


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
    """The `Driver` the app holds, for a trainer that runs in a process of its own.

    `view` is the run so far, folded here from what the child sends; `bus` carries those
    events to the app's sinks (and lets tests put events in as if the child had sent them).
    """

    keep_history = True  # the child starts from it, with nothing to read again

    def __init__(self, opened: OpenedRun, backend: Backend, reviewer: Reviewer, *, secrets: list[str]) -> None:
        super().__init__(opened)
        self.paused = False
        self.held = 0  # stages of the child waiting at the pause gate
        self._backend, self._reviewer, self._secrets = backend, reviewer, secrets
        self._child: subprocess.Popen[bytes] | None = None
        self._started = False
        self._commands: int | None = None
        self._stop: tuple[str, str] | None = None  # (reason, status) once a stop was asked for
        # The reviewer answering the review the view says waits (the engine asks one at a time);
        # held to be cancelled when the child goes, and so the loop does not drop it midway.
        self._answering: asyncio.Task[None] | None = None
        self.bus.subscribe(self._fold)

    @property
    def pid(self) -> int | None:
        """The trainer's process while it runs (what a benchmark adds to the app's memory)."""
        child = self._child
        return child.pid if child is not None and child.returncode is None else None

    # -- running the child ------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Start the trainer and fold what it sends until it ends; the record says how it ended."""
        self.read_history()
        if self._stop is not None:  # stopped before it started: there is no child to say so
            self.stopped_now()
            assert self.outcome is not None
            return self.outcome
        job = Job(self.opened, self._backend, self._secrets, self.history or [], self.paused)
        events_r = await asyncio.to_thread(self._start, dump_job(job))
        self.history = None  # the child has it; the view holds what it said
        # What the person said while the child started, and the job did not carry yet.
        if self.paused != job.paused:
            self._send(Pause() if self.paused else Resume())
        if self._stop is not None:
            self._send(Stop(*self._stop))
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
        code = await asyncio.to_thread(self._reap, None)
        self._after_child(code)
        assert self.outcome is not None
        return self.outcome

    def _start(self, job: bytes) -> int:
        """Start the trainer's process, hand it the job; the read end of its events pipe.

        In a thread: starting a process and writing a run's history to it take longer than a frame.
        """
        events_r, events_w = os.pipe()
        commands_r, commands_w = os.pipe()
        log = os.open(self.run_dir / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        held = [fd for fd in (self.opened.lock.held_fd(),) if fd is not None]
        try:
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD_MAIN, str(commands_r), str(events_w)],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=log,
                # The run lock's descriptor too: the run stays locked while the trainer lives,
                # even when the app is killed first (RunLock.held_fd).
                pass_fds=(commands_r, events_w, *held),
                process_group=0,  # the terminal's Ctrl-C is the app's to handle, not the trainer's
                env=child_env(),
            )
        finally:
            for fd in (log, commands_r, events_w):
                os.close(fd)
        self._child, self._started, self._commands = child, True, commands_w
        assert child.stdin is not None
        # A child that died before reading it is told of below, when its events pipe closes.
        with contextlib.suppress(BrokenPipeError), child.stdin:
            child.stdin.write(job)
        return events_r

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
        """Hold the child before its next stage (a child not started yet starts paused)."""
        self.paused = True
        self._send(Pause())

    def resume(self) -> None:
        self.paused = False
        self._send(Resume())

    def stop(self, reason: str, status: str = "stopped") -> None:
        """Stop the child where it is; it records `status` with `reason` before it exits."""
        if self._stop is None:
            self._stop = (reason, status)
        said, why = self._stop
        self._send(Stop(said, "failed" if why == "failed" else "stopped"))  # the wire knows these two

    def stopped_now(self, reason: str | None = None) -> None:
        """Say here, now, that the session ended; the child writes the record as it stops."""
        reason, status = self._stop or (reason or "stopped", "stopped")
        if not self._started and self.outcome is None:
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
        """Wait for the child to exit (at most `timeout` seconds); its return code, None if it runs on.

        Two callers can wait at once: the run's thread once the child's pipe closes, and the
        app's `close()` as it unmounts; `Popen.wait` gives both the same code.
        """
        if self._child is None:
            return None
        try:
            return self._child.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def _after_child(self, code: int | None) -> None:
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
            how = f"was killed by signal {-code}" if code is not None and code < 0 else "ended without recording why"
            reason, kind = (
                f"the engine process {how}; its output is in {self.run_dir / LOG_NAME}; {self.opened.resume}",
                "failed",
            )
        self._record(kind, reason)
        self._finish(kind, reason)

    def close(self) -> None:
        """Stop the child if it still runs, wait for it to record its end, and release the pipes."""
        self._stop_answering()
        if self.pid is None:
            if self._commands is not None:
                os.close(self._commands)
                self._commands = None
            return
        if self._stop is None:
            self.stop(f"the app closed; {self.opened.resume}")
        code = self._reap(CLOSE_SECONDS)
        if code is None and self._child is not None:
            # It would not stop: nothing more it writes can be trusted to finish.
            with contextlib.suppress(ProcessLookupError):
                self._child.kill()
            code = self._reap(None)
        self._after_child(code)
