"""The Pool pane's tree widens with the terminal, so a note's attribution column is not cut at 120+ columns."""

from __future__ import annotations

import pytest

from skilltui.apps.train.widgets.pool_tree import PoolTree
from tests.support.tui import make_app, screen_text, wait_for

STATS = {"scene/the-cold-open-rule.md": {"passes": 3, "with": 0.4125, "without": 0.455, "with_n": 6, "without_n": 2}}
NOTES = [("scene/the-cold-open-rule.md", "A"), ("dialogue/subtext.md", "B")]


@pytest.mark.parametrize("width", [120, 200])
async def test_the_attribution_column_is_whole_on_a_wide_terminal(open_training, width):
    app = make_app(open_training(), latency=0.5)
    async with app.run_test(size=(width, 36)) as pilot:
        await pilot.press("3")
        tree = app.query_one(PoolTree)
        await wait_for(pilot, lambda: tree.is_mounted and tree.size.width > 0)
        tree.show(NOTES, STATS)
        await wait_for(pilot, lambda: "3 reads · 0.412 vs 0.455" in screen_text(app))
        if width == 200:
            assert tree.size.width > 34  # wider than at 80 columns
        app.stop_training("test over")


async def test_at_80_columns_the_tree_keeps_its_width(open_training):
    app = make_app(open_training(), latency=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        tree = app.query_one(PoolTree)
        await wait_for(pilot, lambda: tree.is_mounted and tree.size.width > 0)
        assert tree.outer_size.width == 34
        app.stop_training("test over")
