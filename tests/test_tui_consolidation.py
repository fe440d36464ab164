"""The app with an epoch's consolidation: its review reads "consolidation", the pool pane draws the pool's size."""

from __future__ import annotations

from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.widgets.pool_size import PoolSize
from tests.support.tui import SIZE, make_app, screen_text, wait_for, wait_for_review


async def test_the_consolidation_is_reviewed_as_such_and_the_pool_pane_shows_its_size(open_training):
    app = make_app(open_training(("harbour", "quarry"), consolidate=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        assert "consolidation" not in screen_text(app)  # the step's own update first
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and "consolidation" in screen_text(app))
        assert "commit train epoch 0 consolidation" in screen_text(app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
        await pilot.press("3")  # the Pool pane
        await wait_for(pilot, lambda: "→" in str(app.query_one("#pool-size-figures").render()))
        figures = str(app.query_one("#pool-size-figures").render())
        sizes = app.query_one(PoolSize).query_one("#pool-size-curve").data
        assert figures == f"{int(sizes[0]):,} → {int(sizes[-1]):,} tokens"
        assert len(sizes) == 2 and sizes[0] == 0 and sizes[-1] > 0  # empty before, one note after the step
