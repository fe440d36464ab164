"""The live app's trainer process: the child's side of `engine_process`.

    python -c "import sys; from skilltui.drivers.trainer_child import main; main(sys.argv)" COMMANDS_FD EVENTS_FD

A fresh interpreter started by the app (`subprocess`, never a fork of the app's threaded
process): it reads what it trains (`job.Job`, one pickle) from its stdin, then trains with
the same `RunDriver` as `--auto`, sends every event and each review request to the app over
the events pipe (`wire.py`, `messages.py`), and obeys the app's pause, resume, stop and
answers from the commands pipe. Its stdout and stderr are `engine.log` in the run folder.

It runs in a process group of its own (the app starts it with `process_group=0`), so the
terminal's Ctrl-C reaches only the app, which stops the trainer on record; and at a lower
priority (`TRAINER_NICENESS`), so where the two want the same core the app's frame goes
first. It stays in the app's session, so where Linux groups the scheduler by session
(autogroup) the niceness ranks it against the app within the one group. On Linux it is also
`SCHED_BATCH`: a trainer thread that wakes (a streamed piece, a tool's result) waits for the
scheduler's tick instead of taking the core from a key's frame at once; the trainer's share
of the CPU is the same either way (figures: docs/benchmarks.md, "The app's frames").

A line from the app it cannot read stops the run as "failed", naming the line's problem: a
trainer that guessed at a command could approve what nobody approved.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

from ..engine.loss import score_pool
from ..model.at import At
from ..model.review import Decision, ReviewRequest
from ..model.view import RunView
from .driver import RunDriver
from .job import Job, load_job
from .messages import Answer, ForApp, Held, Pause, Resume, ReviewAsked, Stop, WireError, key_of, parse_for_trainer
from .wire import EventWire, read_lines

LOG_NAME = "engine.log"
TRAINER_NICENESS = 10  # added to the app's: the trainer yields a shared core to the screen


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


def read_all(fd: int) -> bytes:
    """Everything on `fd` until its end, unbuffered: nothing meant for a later reader is taken."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def main(argv: list[str]) -> NoReturn:
    """Train the job on stdin, talking to the app through the two pipes named in `argv`."""
    code = 1
    try:
        commands, events = int(argv[1]), int(argv[2])
        os.nice(TRAINER_NICENESS)  # background work: the app's frame goes first on a shared core
        if hasattr(os, "SCHED_BATCH"):  # Linux; the threads started later inherit both
            # A hint: where a sandbox refuses the call, the trainer trains without it.
            with contextlib.suppress(OSError):
                os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        for number in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
            signal.signal(number, signal.SIG_DFL)
        job = load_job(read_all(0))
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        # Before the event loop: with one thread, the scorers are forked with the loss already
        # loaded instead of spawned at the first scoring, each reading it again.
        score_pool.start()
        code = asyncio.run(_serve(job, commands, events))
    except BaseException:  # noqa: BLE001 - whatever happens here goes to the log; the app records the end
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        # Not sys.exit: a thread a backend or a scoring pool left running must not keep the
        # process (and with it the run's end, which the app waits for) alive.
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
