"""The review app's tests' harness: a run the offline engine trained, and reading the app's screens."""

from __future__ import annotations

import asyncio
from pathlib import Path

from skilltui.agents.offline import OfflineBackend
from skilltui.apps.history.screens.history import HistoryScreen
from skilltui.apps.history.widgets.status_line import StatusLine
from skilltui.engine.loop import Trainer
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.model.bus import EventBus, JsonlSink
from skilltui.model.review import Decision, ReviewRequest
from skilltui.store.run_folder import Run

SIZE = (120, 36)


class Scripted:
    """Answers the first reviews from a list and approves the rest."""

    def __init__(self, *actions: str) -> None:
        self.actions = list(actions)

    async def review(self, request: ReviewRequest) -> Decision:
        action = self.actions.pop(0) if self.actions else "approve"
        return Decision(action, "human")


def train(runs: Path, works: list[Path], reviewer, steps: int = 2) -> Run:
    # The steps' micro-steps alone; an epoch's consolidation has its own tests (test_consolidation).
    opened = open_run(Settings(works=works, steps=steps, runs_dir=runs, run_id="r", auto=True, consolidate=False))
    bus = EventBus()
    sink = JsonlSink(opened.run.events_path)
    bus.subscribe(sink)
    try:
        asyncio.run(Trainer(opened, OfflineBackend(), reviewer, bus).train())
    finally:
        sink.close()
        opened.lock.release()
    return opened.run


async def settle(pilot) -> None:
    """Let the thread workers finish and their results land on screen."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def screen_of(app) -> HistoryScreen:
    screen = app.screen_stack[1] if len(app.screen_stack) > 1 else app.screen
    assert isinstance(screen, HistoryScreen)
    return screen


def status(app) -> StatusLine:
    return screen_of(app).query_one(StatusLine)


def log(run: Run) -> list[str]:
    return run.pool.git("rev-list", "HEAD").split()
