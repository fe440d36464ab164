"""The app with an epoch's consolidation: its review reads "consolidation", the pool pane draws the pool's size."""

from __future__ import annotations

from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.widgets.pool_size import PoolSize
from skilltui.pool.notes import render_note
from tests.support.tui import SIZE, decisions, make_app, screen_text, wait_for, wait_for_review


async def test_the_consolidation_is_reviewed_as_such_and_the_pool_pane_shows_its_size(open_training, tmp_path):
    # A seeded note no writer reads (its description names no craft the offline writer looks for):
    # the consolidation removes it, so it has a change to review.
    seed = tmp_path / "seed"
    (seed / "character").mkdir(parents=True)
    (seed / "character" / "kettle.md").write_text(render_note("Keep the kettle filled.", "Fill it."), encoding="utf-8")
    app = make_app(open_training(("harbour", "quarry"), consolidate=True, init_pool=seed))
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
        assert len(sizes) == 2 and 0 < sizes[-1] != sizes[0]  # the seed before; after: the step's note, no seed


async def test_a_consolidation_that_changed_no_note_does_not_stop_for_review(open_training):
    """One note that both writers read leaves the consolidation nothing to do: its empty commit is kept unasked."""
    opened = open_training(("harbour", "quarry"), consolidate=True)
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("a")  # one note, read by both writers: nothing to merge or prune
        await wait_for(pilot, lambda: not app.training)  # no second review waits
    consolidation = [d for d in decisions(opened) if d["group"] == 0]
    assert [(d["decision"], d["by"]) for d in consolidation] == [("approve", "auto")]
    assert consolidation[0]["reason"] == "the consolidation changed no note: nothing to review"
