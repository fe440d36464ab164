"""The live app's trainer, forked: the child's side of `engine_process`.

Forked, not spawned: the child inherits the opened run and the backend as they are (a client
holding its key, a test double), with nothing to serialise. It leaves the app's terminal
alone (its stdio go to `engine.log` in the run folder), runs in a session of its own so a
signal meant for the terminal reaches only the app, at a lower priority (niceness +10) so
a core both want goes to the app's frame, and trains on a fresh thread with a fresh event
loop.

A session of its own is also a scheduling group of its own where Linux groups by session
(autogroup, on by default in most distributions): niceness then only ranks the trainer's
threads among themselves, and the app and the trainer split a busy core half and half. The
key bench measured the app's thread waiting 7-20 ms for a core while the trainer scored, with
niceness +10 set. So the child lowers its group's weight too (`/proc/self/autogroup`).

It trains with the same `RunDriver` as `--auto`, sends every event and each review request
to the app over the wire (`wire.py`, `messages.py`), and obeys the app's pause, resume, stop
and answers. A line from the app it cannot read stops the run as "failed", naming the line's
problem: a trainer that guessed at a command could approve what nobody approved.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from ..model import events as ev
from ..model.at import At
from ..model.review import Decision, ReviewRequest
from ..model.view import RunView
from .driver import Backend, OpenedRun, RunDriver
from .messages import Answer, ForApp, Held, Pause, Resume, ReviewAsked, Stop, WireError, key_of, parse_for_trainer
from .wire import EventWire, read_lines

LOG_NAME = "engine.log"
TRAINER_NICENESS = 10  # added to the app's: the trainer yields a shared core to the screen
AUTOGROUP = Path("/proc/self/autogroup")  # Linux with autogroup: the session's scheduling group


def group_niceness() -> int | None:
    """The niceness of this process's scheduling group ("/autogroup-25 nice 0"); None without autogroup."""
    try:
        return int(AUTOGROUP.read_text(encoding="ascii").split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def yield_to_app(app_group: int | None) -> None:
    """Run below the app: niceness +10 for this process and, where Linux groups by session, for its
    new session's group against the app's (`app_group`, read before `setsid`)."""
    os.nice(TRAINER_NICENESS)
    if app_group is None:
        return  # no autogroup (other kernels, or off): niceness alone ranks the two
    with contextlib.suppress(OSError):  # refused: the trainer competes as an equal, slower keys but no harm
        AUTOGROUP.write_text(f"{min(19, app_group + TRAINER_NICENESS)}\n", encoding="ascii")


class PipeReviewer:
    """The engine's reviewer in the child: the request goes to the app once, the answer comes back by key.

    Which review waits is the child's view's to say (`RunView.pending_review`: the engine
    folded its `review_requested` there just before asking, and the message takes that
    record's time). This holds only the future that the answer for that key resolves, so an
    answer about any other micro-step (one the app sent before a rerun, say) resolves nothing.
    """

    def __init__(self, send: Callable[[ForApp], None]) -> None:
        self._send = send
        self.view: RunView | None = None  # the driver's, once there is one
        self._answer: tuple[At, asyncio.Future[Decision]] | None = None

    async def review(self, request: ReviewRequest) -> Decision:
        key = key_of(request)
        waiting = self.view.pending_review if self.view is not None else None
        if waiting is None or waiting.key != key:
            raise RuntimeError(f"the engine asked for the review of {key} without recording that it waits")
        future = asyncio.get_running_loop().create_future()
        self._answer = (key, future)
        self._send(ReviewAsked(request, waiting.time))
        try:
            return await future
        finally:
            self._answer = None

    def answer(self, message: Answer) -> None:
        if self._answer is None or self._answer[0] != message.key or self._answer[1].done():
            return
        future = self._answer[1]
        if message.decision is None:
            future.set_exception(RuntimeError(f"the app's reviewer failed: {message.error}"))
        else:
            future.set_result(message.decision)


@dataclass(frozen=True)
class Job:
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


def run_child(job: Job, commands: int, events: int) -> NoReturn:
    code = 1
    try:
        app_group = group_niceness()
        os.setsid()
        # Background work: where the two want the same core, the app's frame goes first.
        yield_to_app(app_group)
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


async def _serve(job: Job, commands: int, events: int) -> int:
    wire = EventWire(events)
    reviewer = PipeReviewer(wire.send)
    driver = RunDriver(job.opened, job.backend, reviewer, secrets=job.secrets, sinks=(wire.event,))
    reviewer.view = driver.view
    driver.read_history(job.history)
    driver.trainer.on_held = lambda held: wire.send(Held(held))
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


async def _listen(commands: int, driver: RunDriver, reviewer: PipeReviewer, training: asyncio.Task) -> None:
    reader, transport = await read_lines(commands)
    try:
        while line := await reader.readline():
            try:
                message = parse_for_trainer(line)
            except WireError as exc:
                driver.stop(f"the trainer could not read a message from the app: {exc}", "failed")
                training.cancel()
                return
            match message:
                case Pause():
                    driver.trainer.pause()
                case Resume():
                    driver.trainer.resume()
                case Answer():
                    reviewer.answer(message)
                case Stop():
                    driver.stop(message.reason, message.status)
                    training.cancel()
        # The app is gone without a word (killed): stop where we are and say so.
        driver.stop(f"the app went away; {driver.opened.resume}")
        training.cancel()
    finally:
        transport.close()
