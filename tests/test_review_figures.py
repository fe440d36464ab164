"""The review header and the end summary say the same validation "before": one figure, the run model's.

A gated run with several candidates measures the start notes again after the first review
(the kept candidate's fresh pass): the summary used to start from that later mean while the
first review's header had shown the verdict's, so the two disagreed on the same notes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from skilltui.agents.offline import OfflineBackend
from skilltui.apps.train.screens.review import gate_line
from skilltui.engine.loop import Trainer
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.model.bus import EventBus, JsonlSink
from skilltui.model.parse import read_run
from skilltui.model.review import Decision, ReviewRequest
from skilltui.model.summary import summarise
from skilltui.model.view import RunView
from tests.support.validation import held_out_work


class Recording:
    """Approves every micro-step and keeps the requests it was shown."""

    def __init__(self) -> None:
        self.requests: list[ReviewRequest] = []

    async def review(self, request: ReviewRequest) -> Decision:
        self.requests.append(request)
        return Decision("approve", "human")


def test_the_first_reviews_validation_before_is_the_summarys_start(tmp_path: Path, make_work) -> None:
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    val = [held_out_work(tmp_path / "works"), make_work("wren", 4)]
    settings = Settings(
        works=works,
        val_works=val,
        gate=True,
        candidates=3,
        offline_noise=0.15,
        steps=1,
        consolidate=False,
        runs_dir=tmp_path / "runs",
        run_id="r",
    )
    opened = open_run(settings)
    bus = EventBus()
    sink = JsonlSink(opened.run.events_path)
    bus.subscribe(sink)
    reviewer = Recording()
    try:
        asyncio.run(Trainer(opened, OfflineBackend(noise=0.15), reviewer, bus).train())
    finally:
        sink.close()
        opened.lock.release()

    first = reviewer.requests[0]
    assert first.gate is not None and first.gate.before is not None
    header = gate_line(first).plain
    shown = f"{first.gate.before:.3f}"
    assert f"validation {shown} → " in header, header
    view = RunView().fold(read_run(opened.run.events_path).events)
    summary = summarise(view).lines()
    start = next(line for line in summary if line.startswith("selection (validation) loss"))
    assert start.startswith(f"selection (validation) loss {shown} (2 works) before any update"), (header, start)
    # The start notes were measured again after that review: the figure stands all the same.
    before_points = [e for e in read_run(opened.run.events_path).events if getattr(e, "point", "") == "before"]
    assert len(before_points) > 2, "the kept candidate's fresh pass measured the start notes again"
