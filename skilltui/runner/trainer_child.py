"""The live app's trainer, forked: the child's side of `engine_process`.

Forked, not spawned: the child inherits the opened run and the backend as they are (a client
holding its key, a test double), with nothing to serialise. It leaves the app's terminal
alone (its stdio go to `engine.log` in the run folder), runs in a session of its own so a
signal meant for the terminal reaches only the app, at a lower priority (niceness +10) so
a core both want goes to the app's frame, and trains on a fresh thread with a fresh event
loop.

It trains with the same `RunDriver` as `--auto`, sends every event and each review request
to the app over the wire (`wire.py`), and obeys the app's pause, resume, stop and decisions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from ..model import events as ev
from ..model.review import Decision, ReviewRequest, decision_from_dict, request_to_dict
from .driver import Backend, OpenedRun, RunDriver
from .wire import EventWire, read_lines

LOG_NAME = "engine.log"
TRAINER_NICENESS = 10  # added to the app's: the trainer yields a shared core to the screen


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


async def _serve(job: Job, commands: int, events: int) -> int:
    wire = EventWire(events)
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
    reader, transport = await read_lines(commands)
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
