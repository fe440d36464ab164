"""Shared pieces of the terminal app's tests: the app on an opened run, and waiting for it.

Holds no tests itself. The fixtures (`open_training`, and the per-test config folder) are
in conftest.py.
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import TabbedContent

from skilltui.agents.offline import OfflineBackend
from skilltui.apps.train.app import TrainingApp
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.engine.opening import OpenedRun
from tests.support.recorded import recorded

SIZE = (120, 36)


def make_app(opened: OpenedRun, latency: float = 0.0, **kwargs) -> TrainingApp:
    """The app on an opened run; without the first-start hint (a returning user) unless `hint` says.

    Its trainer runs in the app's own loop (conftest's `quick_engine`); a test that asks for the
    `process_driver` fixture gets the product's trainer process instead.
    """
    kwargs.setdefault("hint", False)
    return TrainingApp(opened, OfflineBackend(latency=latency), secrets=[], **kwargs)


async def wait_for(pilot: Pilot, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    """Let the app run until `predicate()` holds; fail the test after `timeout` seconds.

    The app runs on its own while this sleeps. `pilot.pause` (which waits until every widget
    on the screen has handled what was queued to it) is paid once the predicate holds, and the
    predicate is checked again after it, so it holds as the test's next step finds the app;
    paid at every poll, as it once was, it cost about 0.7 s of CPU a test while the trainer
    worked.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    settled = True  # nothing ran since the caller's last step
    while True:
        if predicate():
            if settled:
                return
            await pilot.pause(0)
            settled = True
            continue
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {predicate}")
        await asyncio.sleep(0.02)
        settled = False


async def wait_for_review(pilot: Pilot, app: TrainingApp) -> ReviewScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.is_mounted)
    await pilot.pause()
    assert isinstance(app.screen, ReviewScreen)
    return app.screen


def decisions(opened: OpenedRun) -> list[dict]:
    return [e for e in recorded(opened.run.events_path) if e["kind"] == "decision"]


def screen_text(app: TrainingApp) -> str:
    """Every line the active screen shows right now, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def tab_label(app: TrainingApp, pane: str) -> str:
    """The label of one of the main screen's pane tabs ("Commits · 2"), whichever screen is on top."""
    return app.main.query_one(TabbedContent).get_tab(pane).label.plain


def stub_editor(tmp_path, line: str):
    """An editor that appends `line` to the file it is given, as a person typing would."""
    script = tmp_path / "editor.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "{line}" >> "$1"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script
