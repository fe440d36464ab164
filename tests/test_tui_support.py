"""Shared pieces of the terminal app's tests: a run opened on fresh works, and waiting for the app.

Holds no tests itself. Every TUI test gets its own config folder (XDG_CONFIG_HOME), so
no test reads or writes the person's real remembered theme.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from skilltui.agents.offline import OfflineBackend
from skilltui.engine.events import read_events
from skilltui.engine.session import OpenedRun, Settings, open_run
from skilltui.tui.app import TrainingApp
from skilltui.tui.screens.review import ReviewScreen

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    # The first-start hint holds the first review back; tests of other things start as a returning user.
    (home / "skilltui").mkdir(parents=True)
    (home / "skilltui" / "hint-seen").touch()
    return home


@pytest.fixture
def open_training(make_work: Callable[..., Path], tmp_path: Path) -> Iterator[Callable[..., OpenedRun]]:
    """open_training(names, **settings): open a run on new works; every lock is released after the test."""
    opened_runs: list[OpenedRun] = []
    made: dict[str, Path] = {}

    def open_(names: tuple[str, ...] = ("alpha", "beta"), episodes: int = 4, **settings) -> OpenedRun:
        works = []
        for name in names:
            if name not in made:
                made[name] = make_work(name, episodes)
            works.append(made[name])
        values = {"steps": 1, "episodes_per_step": 2, "group_size": 0, "runs_dir": tmp_path / "runs", "run_id": "t"}
        values.update(settings)
        opened = open_run(Settings(works=works, backend="offline", **values))
        opened_runs.append(opened)
        return opened

    yield open_
    for opened in opened_runs:
        opened.lock.release()


def make_app(opened: OpenedRun, latency: float = 0.0, **kwargs) -> TrainingApp:
    return TrainingApp(opened, OfflineBackend(latency=latency), secrets=[], **kwargs)


async def wait_for(pilot: Pilot, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    """Let the app run until `predicate()` holds; fail the test after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {predicate}")
        await pilot.pause(0.02)


async def wait_for_review(pilot: Pilot, app: TrainingApp) -> ReviewScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.is_mounted)
    await pilot.pause()
    assert isinstance(app.screen, ReviewScreen)
    return app.screen


def decisions(opened: OpenedRun) -> list[dict]:
    return [e for e in read_events(opened.run.events_path) if e["kind"] == "decision"]


def screen_text(app: TrainingApp) -> str:
    """Every line the active screen shows right now, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
