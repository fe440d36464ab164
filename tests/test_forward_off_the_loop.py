"""The writer's pass reads and clears its files in a thread, never on the event loop.

The live app's keys, the other works' calls and the stop signal all wait on the one loop; a
forward that read a big pool's notes, its story or a dead attempt's scripts there would stall
them all for as long as the disk takes. Each file function forward uses is wrapped here to
record whether it ran on a thread with a running event loop.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest

from skilltui.agents.offline import OfflineBackend
from skilltui.engine.stages import passes
from skilltui.engine.stages.calls import Calls
from skilltui.engine.stages.context import Context, TrainingWorks
from skilltui.model.at import At
from skilltui.model.bus import EventBus
from skilltui.pool.notes import Pool
from skilltui.store.places import Place


def on_the_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[bool]]:
    """name -> for each call of that file function during a forward, whether it ran on the loop."""
    seen: dict[str, list[bool]] = {}

    def spy(name: str, function, only=lambda *args: True):
        def wrapper(*args, **kwargs):
            if only(*args):
                seen.setdefault(name, []).append(on_the_loop())
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(passes, "story_lead", spy("story_lead", passes.story_lead))
    monkeypatch.setattr(passes, "written_episodes", spy("written_episodes", passes.written_episodes))
    monkeypatch.setattr(Pool, "headers", spy("headers", Pool.headers))
    # Only a scripts folder's clearing is forward's: other code may remove folders of its own.
    monkeypatch.setattr(shutil, "rmtree", spy("rmtree", shutil.rmtree, lambda path, *_: "scripts" in str(path)))
    return seen


async def test_forward_reads_and_clears_its_files_off_the_event_loop(open_training, calls) -> None:
    opened = open_training(("alpha",))
    bus = EventBus()
    calls_ = Calls(OfflineBackend(), opened.settings, opened.prompts, bus)
    ctx = Context(opened.run, opened.settings, opened.prompts, bus, calls_, TrainingWorks(list(opened.works)))
    work = opened.works[0]
    # A dead attempt left a folder and a half-written episode: forward clears both first.
    stale = Place.training(opened.run, 0, 0, work.name).work_dir / "scripts"
    (stale / "drafts").mkdir(parents=True)
    (stale / "01.fountain").write_text("half", encoding="utf-8")

    assert await passes.forward(ctx, work, At(0, 0), (1, 2)) is True
    assert not (stale / "drafts").exists()
    assert set(calls) == {"story_lead", "written_episodes", "headers", "rmtree"}, calls
    assert not any(on_loop for each in calls.values() for on_loop in each), calls

    calls.clear()  # done.json now marks the pass: a second forward reads nothing
    assert await passes.forward(ctx, work, At(0, 0), (1, 2)) is False
    assert calls == {}
