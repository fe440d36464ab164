"""The live app's trainer in a process of its own, so the screen answers keys while works stream.

Why a process: with the trainer in the app's event loop, every stage's Python work (prompts,
sandboxes, event records, scoring, git) ran between a key and its frame, and the threads
doing the rest held the one interpreter lock. The key bench (`bench/bench_tui.py`) measured
p95 key latency at 1.3-1.7x idle with 16 works streaming; the same stream drawn with the
engine's cost taken away measured 1.04x. So the app forks: the child trains with the same
`RunDriver` as `--auto` (it alone writes `events.jsonl`), and the app folds the events it is
sent into its own `RunView` and draws them.

One JSON object per line, each way:

- child to app (events pipe): `{"t": "event", "event": {...}}` for every event (streamed text
  joined per agent over up to `DELTA_SECONDS`, see `_Wire`);
  `{"t": "review", "id": n, "request": {...}}` when a micro-step waits for its review;
  `{"t": "held", "n": k}` when the number of stages waiting at the pause gate changes.
- app to child (commands pipe): `{"t": "pause"}`, `{"t": "resume"}`,
  `{"t": "stop", "reason": ..., "status": "stopped" | "failed"}`, and
  `{"t": "decision", "id": n, "decision": {...}}` (or `"error": ...` when the app's reviewer failed).

Nothing is lost whichever side dies:

- the app quits, closes or crashes: it tells the child to stop (as "failed" for a crash, with
  the traceback file named) and waits for it to record the end;
- the app is killed: the commands pipe closes, the child stops and records why;
- the child dies: the app sees the events pipe close with no `run_finished` on record and
  writes one itself ("failed", naming `engine.log`); it is the only writer once the child is gone.

Forked, not spawned: the child inherits the opened run and the backend as they are (a client
holding its key, a test double), with nothing to serialise. It leaves the app's terminal
alone (its stdio go to `engine.log` in the run folder), runs in a session of its own so a
signal meant for the terminal reaches only the app, at a lower priority (niceness +10) so
a core both want goes to the app's frame, and trains on a fresh thread with a fresh event
loop. Where there is no fork (Windows), `make_driver` trains in the app's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from ..engine import events as bus_events
from . import events as ev
from .driver import Backend, OpenedRun, Outcome, RunDriver, RunFold, crash_reason, save_crash
from .parse import parse_event
from .review import Decision, Reviewer, ReviewRequest, decision_from_dict, request_from_dict, request_to_dict

LOG_NAME = "engine.log"
LINE_LIMIT = 64 * 1024 * 1024  # a review's request carries whole patches and reports
CLOSE_SECONDS = 15.0  # how long the app waits for a stopping child to record its end
TRAINER_NICENESS = 10  # added to the app's: the trainer yields a shared core to the screen
DELTA_SECONDS = 0.05  # how long streamed text may wait in the child to go in one line (see _Wire)


def make_driver(
    opened: OpenedRun, backend: Backend, reviewer: Reviewer, *, secrets: list[str]
) -> ProcessDriver | RunDriver:
    """The app's driver: the trainer in a child process where the system can fork, else in the app's loop."""
    if hasattr(os, "fork"):
        return ProcessDriver(opened, backend, reviewer, secrets=secrets)
    return RunDriver(opened, backend, reviewer, secrets=secrets)


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, default=str, ensure_ascii=False) + "\n").encode()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def _lines(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """An asyncio reader of the pipe `fd` (which it now owns)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    return reader, transport


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
            record = json.loads(raw)
            return record if isinstance(record, dict) else None
    return None


# -- the app's side -------------------------------------------------------------------------


class ProcessDriver(RunFold):
    """The `RunDriver` face the app needs, for a trainer that runs in a forked child.

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
        self._forked = False
        self._commands: int | None = None
        self._stop: tuple[str, str] | None = None  # (reason, status) once a stop was asked for
        self._reviews: set[asyncio.Task[None]] = set()
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
            job = _Job(self.opened, self._backend, self._secrets, self.history or [], self.paused)
            _child(job, commands_r, events_w)
        os.close(events_w)
        os.close(commands_r)
        self._pid, self._commands = pid, commands_w
        self.history = None  # the child has it; the view holds what it said
        reader, transport = await _lines(events_r)
        try:
            while line := await reader.readline():
                self._take(json.loads(line))
        finally:
            transport.close()
            for task in self._reviews:
                task.cancel()
        status = await asyncio.to_thread(self._reap, None)
        self._after_child(status)
        assert self.outcome is not None
        return self.outcome

    def _take(self, message: dict[str, Any]) -> None:
        kind = message.get("t")
        if kind == "event":
            event = parse_event(message["event"])
            if isinstance(event, ev.RunFinished) and self.outcome is not None:
                return  # the app already said how this session ended (it asked for the stop)
            self.bus.emit(event)
        elif kind == "review":
            task = asyncio.create_task(self._review(message["id"], request_from_dict(message["request"])))
            self._reviews.add(task)
            task.add_done_callback(self._reviews.discard)
        elif kind == "held":
            self.held = int(message["n"])

    async def _review(self, number: int, request: ReviewRequest) -> None:
        try:
            decision = await self._reviewer.review(request)
        except Exception as exc:  # noqa: BLE001 - the child fails the run on record with this
            self._send({"t": "decision", "id": number, "error": f"{type(exc).__name__}: {exc}"})
        else:
            self._send({"t": "decision", "id": number, "decision": asdict(decision)})

    def _send(self, message: dict[str, Any]) -> None:
        if self._commands is None:
            return
        try:
            _write_all(self._commands, _line(message))
        except OSError:
            pass  # the child is gone; its end is recorded when its pipe closes

    # -- control ----------------------------------------------------------------------------

    def pause(self) -> None:
        """Hold the child before its next stage (a child not forked yet starts paused)."""
        self.paused = True
        self._send({"t": "pause"})

    def resume(self) -> None:
        self.paused = False
        self._send({"t": "resume"})

    def stop(self, reason: str, status: str = "stopped") -> None:
        """Stop the child where it is; it records `status` with `reason` before it exits."""
        if self._stop is None:
            self._stop = (reason, status)
        self._send({"t": "stop", "reason": self._stop[0], "status": self._stop[1]})

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
        """Wait for the child to exit (at most `timeout` seconds); its wait status, None if it runs on."""
        if self._pid is None:
            return None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                pid, status = os.waitpid(self._pid, 0 if deadline is None else os.WNOHANG)
            except ChildProcessError:
                pid, status = self._pid, 0  # reaped already
            if pid:
                self._pid = None
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
                f"the engine process {how}; its output is in {self.run_dir / LOG_NAME}; run the same command to resume",
                "failed",
            )
        self._record(kind, reason)
        self._finish(kind, reason)

    def close(self) -> None:
        """Stop the child if it still runs, wait for it to record its end, and release the pipes."""
        for task in self._reviews:
            task.cancel()
        if self._pid is None:
            if self._commands is not None:
                os.close(self._commands)
                self._commands = None
            return
        if self._stop is None:
            self.stop("the app closed; run the same command to resume")
        status = self._reap(CLOSE_SECONDS)
        if status is None:  # it would not stop: nothing more it writes can be trusted to finish
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            status = self._reap(None)
        self._after_child(status)


# -- the child's side -----------------------------------------------------------------------


class _PipeReviewer:
    """The engine's reviewer in the child: each request goes to the app, the decision comes back."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._waiting: dict[int, asyncio.Future[Decision]] = {}
        self._next = 0

    async def review(self, request: ReviewRequest) -> Decision:
        self._next += 1
        number = self._next
        future = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        self._send({"t": "review", "id": number, "request": request_to_dict(request)})
        try:
            return await future
        finally:
            self._waiting.pop(number, None)

    def answer(self, message: dict[str, Any]) -> None:
        future = self._waiting.get(message["id"])
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(RuntimeError(f"the app's reviewer failed: {message['error']}"))
        else:
            future.set_result(decision_from_dict(message["decision"]))


class _Wire:
    """The events pipe from the child: whole lines, and silence once the app stopped reading.

    Streamed text is the bulk of it (16 works streaming send hundreds of deltas a second), and
    the app only draws it every `FLUSH_SECONDS`. So deltas wait here up to `DELTA_SECONDS` and
    go as one line per agent, joined in order; any other event sends them first, so the app
    sees everything in the order it happened.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.open = True
        self._deltas: list[ev.Delta] = []
        self._flush: asyncio.TimerHandle | None = None

    def event(self, event: ev.Event) -> None:
        if isinstance(event, ev.Delta):
            self._deltas.append(event)
            if self._flush is None:
                self._flush = asyncio.get_running_loop().call_later(DELTA_SECONDS, self.flush)
            return
        self.flush()
        self.send({"t": "event", "event": event.to_dict()})

    def flush(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        joined: list[ev.Delta] = []
        for delta in self._deltas:
            last = joined[-1] if joined else None
            if last is not None and (last.role, last.work, last.group) == (delta.role, delta.work, delta.group):
                joined[-1] = replace(last, text=last.text + delta.text)
            else:
                joined.append(delta)
        self._deltas = []
        for delta in joined:
            self.send({"t": "event", "event": delta.to_dict()})

    def send(self, message: dict[str, Any]) -> None:
        if message.get("t") != "event":
            self.flush()  # a review or a count must not overtake the text streamed before it
        if not self.open:
            return
        try:
            _write_all(self.fd, _line(message))
        except OSError:
            self.open = False  # the app is gone or closing: the record in events.jsonl is what counts


@dataclass(frozen=True)
class _Job:
    """What the child trains, as the app had it at the fork."""

    opened: OpenedRun
    backend: Backend
    secrets: list[str]
    history: list[ev.Event]  # what earlier sessions recorded, already read by the app
    paused: bool  # the person paused before training started


_INHERITED: list[object] = []  # the app's git handles, kept from finalisers that would end the app's processes


def _close_inherited(keep: set[int]) -> None:
    """Close every descriptor the fork copied but the pipes and stdio.

    The app's threads start git processes at any time; a fork in the middle of one copies the
    write end of that git's output pipe, and the app's read of it never saw the end of the
    output while the child lived (the Pool pane stopped updating, its reader stuck). The
    terminal's descriptors go too: the child has no business with them.
    """
    low = 3
    for fd in sorted(f for f in keep if f >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 4096)


def _own_git(opened: OpenedRun) -> None:
    """Give the child its own handle on the pool's git: the inherited one talked through pipes
    now closed, to git processes that belong to the app."""
    inherited = opened.run.__dict__.pop("pool", None)  # `Run.pool` is cached per run
    if inherited is not None:
        _INHERITED.append(inherited)


def _child(job: _Job, commands: int, events: int) -> NoReturn:
    code = 1
    try:
        os.setsid()
        # Background work: where the two want the same core, the app's frame goes first.
        os.nice(TRAINER_NICENESS)
        log = os.open(job.opened.run.root / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        _close_inherited(keep={0, 1, 2, commands, events})
        _own_git(job.opened)
        # The app's stdio objects belong to its terminal (and may be locked by a thread that no
        # longer exists here): print to the log through new ones.
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", closefd=False)  # noqa: SIM115
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(number, signal.SIG_DFL)
        result: list[int] = []
        # A new thread has no running loop of its own; this one still holds the app's.
        trainer = threading.Thread(
            target=lambda: result.append(asyncio.run(_serve(job, commands, events))),
            name="engine",
        )
        trainer.start()
        trainer.join()
        code = result[0] if result else 1
    except BaseException:  # noqa: BLE001 - whatever happens here, the app must get its process back
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


async def _serve(job: _Job, commands: int, events: int) -> int:
    wire = _Wire(events)
    reviewer = _PipeReviewer(wire.send)
    driver = RunDriver(job.opened, job.backend, reviewer, secrets=job.secrets, sinks=(wire.event,))
    driver.read_history(job.history)
    driver.trainer.on_held = lambda held: wire.send({"t": "held", "n": held})
    if job.paused:
        driver.trainer.pause()
    training = asyncio.create_task(driver.run())
    listening = asyncio.create_task(_listen(commands, driver, reviewer, training))
    with contextlib.suppress(asyncio.CancelledError):
        await training
    listening.cancel()
    wire.flush()
    driver.close()
    return 0 if driver.outcome is not None and driver.outcome.status != "failed" else 1


async def _listen(commands: int, driver: RunDriver, reviewer: _PipeReviewer, training: asyncio.Task) -> None:
    reader, transport = await _lines(commands)
    try:
        while line := await reader.readline():
            message = json.loads(line)
            kind = message.get("t")
            if kind == "pause":
                driver.trainer.pause()
            elif kind == "resume":
                driver.trainer.resume()
            elif kind == "decision":
                reviewer.answer(message)
            elif kind == "stop":
                driver.stop(message["reason"], message.get("status", "stopped"))
                training.cancel()
        # The app is gone without a word (killed): stop where we are and say so.
        driver.stop("the app went away; run the same command to resume")
        training.cancel()
    finally:
        transport.close()
