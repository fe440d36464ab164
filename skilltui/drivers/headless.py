"""`--auto`: train through the driver with the automatic reviewer and the console, and end in one line.

SIGINT, SIGTERM and SIGHUP: the first stops before the next stage (calls in flight finish),
a second stops at once. Either way the run's record ends with `run_finished` (the driver's
promise), the console prints the summary, and the exit code says how it ended: 0 finished
or stopped by a limit, 1 failed, 128+signal when a signal stopped it.
"""

from __future__ import annotations

import asyncio
import sys

from rich.console import Console

from ..agents.base import Backend
from ..core.signals import exit_code, install_stop_signals, loop_stop_signals, name_of
from ..engine.loss import score_pool
from ..engine.opening import OpenedRun
from ..engine.update.review import AutoReviewer
from ..model import events as ev
from .console import HEARTBEAT_SECONDS, ConsoleSink
from .driver import RunDriver


def train_headless(
    opened: OpenedRun,
    backend: Backend,
    *,
    secrets: list[str],
    console: Console | None = None,
    heartbeat: float = HEARTBEAT_SECONDS,
) -> int:
    # First, while this process has one thread (the driver's event log starts one): the scorers
    # are forked with the loss already loaded instead of spawned at the first scoring (a
    # second of CPU each).
    score_pool.start()
    driver = RunDriver(opened, backend, AutoReviewer(), secrets=secrets)
    sink = ConsoleSink(console, view=driver.view, heartbeat=heartbeat)
    driver.subscribe(sink)
    caught: list[int] = []

    async def train_until_signal() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def on_signal(signum: int) -> None:
            caught.append(signum)
            if len(caught) == 1:
                driver.stop(f"stopped by {name_of(signum)}")
                driver.bus.emit(
                    ev.Warning_(message=f"{name_of(signum)}: stopping once the calls in flight finish; again stops now")
                )
            elif task is not None:
                task.cancel()

        with loop_stop_signals(loop, on_signal):
            beat = asyncio.ensure_future(sink.beat())
            try:
                await driver.run()
            finally:
                beat.cancel()

    try:
        asyncio.run(train_until_signal())
    except asyncio.CancelledError:
        pass  # a second signal: the driver has recorded the stop
    finally:
        install_stop_signals()  # asyncio put the defaults back; the last moments end in one line too
        sink.close()
        driver.close()
    outcome = driver.outcome
    if caught:
        print(f"skilltui: run stopped by {name_of(caught[0])}; {opened.resume}", file=sys.stderr)
        return exit_code(caught[0])
    if outcome is None or outcome.status == "failed":
        print(f"skilltui: run failed: {outcome.reason if outcome else 'no outcome'}", file=sys.stderr)
        return 1
    if outcome.status in ("stopped", "interrupted"):
        resume = opened.resume
        how = outcome.reason if outcome.reason.endswith(resume) else f"{outcome.reason}; {resume}"
        print(f"skilltui: run {outcome.status}: {how}", file=sys.stderr)
    return 0
