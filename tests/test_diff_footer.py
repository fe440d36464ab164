"""The history browser's diff view: its footer keys all fit at 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltui.apps.history.app import HistoryApp
from skilltui.apps.shared.screens.diff import DiffScreen
from skilltui.store.run_folder import Run
from tests.support.history import Scripted, settle, train


@pytest.fixture
def run(make_work, tmp_path: Path) -> Run:
    return train(tmp_path / "runs", [make_work("moth-ferry"), make_work("glass-choir")], Scripted())


async def test_the_diff_views_footer_shows_every_key_at_80_columns(run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        footer = [strip.text for strip in app.screen._compositor.render_strips()][-1]
        shown = [b.description for b in DiffScreen.BINDINGS if b.show]
        assert all(description in footer for description in shown), footer
        assert "q Quit" in footer and footer.rstrip().endswith("palette"), footer  # nothing cut before the palette key
