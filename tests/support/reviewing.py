"""Training one run in process with a reviewer that answers from a list: the backward tests' harness."""

from __future__ import annotations

import asyncio
from pathlib import Path

from skilltui.engine.loop import Trainer
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.model.bus import EventBus, JsonlSink
from skilltui.model.review import Decision, ReviewRequest


class ScriptedReviewer:
    """Answers reviews from a list, and remembers every request it saw."""

    def __init__(self, *decisions: Decision) -> None:
        self.decisions = list(decisions)
        self.requests: list[ReviewRequest] = []

    async def review(self, request: ReviewRequest) -> Decision:
        self.requests.append(request)
        return self.decisions.pop(0) if self.decisions else Decision("approve", "auto")


def open_(tmp_path: Path, works: list[Path], **settings) -> object:
    # The micro-steps of the steps alone: an epoch's consolidation has its own tests (test_consolidation).
    settings.setdefault("consolidate", False)
    return open_run(Settings(works=works, runs_dir=tmp_path / "runs", run_id="r", auto=True, **settings))


def train_once(tmp_path, works, backend, reviewer, **settings):
    opened = open_(tmp_path, works, **settings)
    bus = EventBus()
    sink = JsonlSink(opened.run.events_path)
    bus.subscribe(sink)
    try:
        outcome = asyncio.run(Trainer(opened, backend, reviewer, bus).train())
    finally:
        sink.close()
        opened.lock.release()
    return opened.run, outcome
