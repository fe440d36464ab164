"""`skilltui crossval`'s folds trained at once, headless, in one event loop, and stopped together.

Each fold is an ordinary run (its own folder, lock, record and automatic reviewer), driven
by its own `RunDriver`; they share the process and its --workers (each fold was given its
share). SIGINT, SIGTERM and SIGHUP stop every fold before its next stage (a second one at
once); each record says how it ended, and the same command resumes them all. A fold's
progress is said in one line per test point and one at its end, prefixed with the fold.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from ..agents.base import Backend
from ..core.signals import exit_code, install_stop_signals, loop_stop_signals, name_of
from ..engine.opening import OpenedRun
from ..engine.stages.ending import Outcome
from ..engine.update.review import AutoReviewer
from ..model import events as ev
from .driver import RunDriver


def fold_lines(name: str, say: Callable[[str], None]) -> Callable[[ev.Event], None]:
    """The lines a fold earns while the folds train together: its test points and its end."""

    def sink(event: ev.Event) -> None:
        if isinstance(event, ev.TestMeasured):
            say(f"[{name}] {event.text}")
        elif isinstance(event, ev.RunFinished):
            say(f"[{name}] {event.status}" + (f": {event.reason}" if event.reason else ""))

    return sink


def train_folds(folds: list[tuple[str, OpenedRun, Backend]], *, secrets: list[str]) -> tuple[list[Outcome], int]:
    """Train every fold to its end at once; their outcomes, and the exit code a stop signal asks for (0: none)."""

    def say(line: str) -> None:
        print(line, flush=True)

    drivers = [
        RunDriver(opened, backend, AutoReviewer(), secrets=secrets, sinks=(fold_lines(name, say),))
        for name, opened, backend in folds
    ]
    caught: list[int] = []

    async def until_signal() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def on_signal(signum: int) -> None:
            caught.append(signum)
            if len(caught) == 1:
                for driver in drivers:
                    driver.stop(f"stopped by {name_of(signum)}")
            elif task is not None:
                task.cancel()

        with loop_stop_signals(loop, on_signal):
            await asyncio.gather(*(driver.run() for driver in drivers))

    try:
        asyncio.run(until_signal())
    except asyncio.CancelledError:
        pass  # a second signal: each driver has recorded its stop
    finally:
        install_stop_signals()
        for driver in drivers:
            driver.close()
    outcomes = [d.outcome or Outcome("failed", "no outcome") for d in drivers]
    if caught:
        print(f"skilltui: crossval stopped by {name_of(caught[0])}; run the same command to resume", file=sys.stderr)
        return outcomes, exit_code(caught[0])
    return outcomes, 0
