"""80x24 after a demo-sized run: the loss curve still tells the first step from the last, and `z` folds the summary.

A chart of three rows puts 0.752 and 0.557 on one row, so below its minimum height the
curve writes its numbers, one step a row; the end summary takes a third of the screen,
and one key folds it to its first line.
"""

from __future__ import annotations

from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.widgets.end_summary import EndSummary
from skilltui.apps.train.widgets.loss_curve import MIN_PLOT_ROWS, LossCurve
from skilltui.model.figures import step_means
from tests.support.tui import make_app, wait_for


def curve_lines(app) -> list[str]:
    return str(app.main.query_one(LossCurve).render()).splitlines()


async def finish_approving(pilot, app) -> None:
    """Approve every micro-step as it asks, until the run ends."""
    while app.training:
        if isinstance(app.screen, ReviewScreen) and app.screen.is_mounted:
            await pilot.press("a")
        await pilot.pause(0.05)


async def test_at_80x24_the_first_and_last_steps_are_on_different_rows_and_z_folds_the_summary(open_training):
    opened = open_training(("dead-air", "night-oven", "the-second-bid"), steps=3, group_size=2)
    app = make_app(opened)
    async with app.run_test(size=(80, 24)) as pilot:
        await finish_approving(pilot, app)
        summary = app.main.query_one(EndSummary)
        await wait_for(pilot, lambda: summary.display and len(summary.lines) > 2)
        await pilot.pause()
        means = step_means(app.main.view)
        first, last = (means[k].value for k in (min(means), max(means)))
        assert round(first, 3) != round(last, 3), "the run did not move the loss"
        lines = curve_lines(app)
        rows_of = {v: [i for i, line in enumerate(lines) if f"● {v:.3f}" in line] for v in (first, last)}
        assert rows_of[first] and rows_of[last] and rows_of[first] != rows_of[last], lines
        # One key folds the summary to its first line, and again unfolds it.
        whole = summary.size.height
        await pilot.press("z")
        await pilot.pause()
        assert summary.folded and summary.size.height < whole
        assert str(summary.render()).startswith(summary.lines[0]) and "\n" not in str(summary.render())
        await pilot.press("z")
        await pilot.pause()
        assert summary.size.height == whole


async def test_a_tall_curve_draws_the_chart(open_training):
    app = make_app(open_training(steps=2))
    async with app.run_test(size=(120, 50)) as pilot:
        await finish_approving(pilot, app)
        curve = app.main.query_one(LossCurve)
        await wait_for(pilot, lambda: curve.content_size.height - 2 >= MIN_PLOT_ROWS and curve._steps)
        assert any("┤" in line for line in curve_lines(app))  # the axis: the chart, not the numbers


def test_the_numbers_keep_the_first_step_and_the_latest_when_rows_are_few():
    from skilltui.model.figures import Mean

    curve = LossCurve()
    keys = [(0, s) for s in range(6)]
    curve.show(keys, {}, {k: Mean(0.9 - 0.1 * k[1], 2, 2, frozenset({"a", "b"})) for k in keys})
    lines = [line.plain for line in curve._numbers(40, 5)]
    assert lines[1].startswith("e0·s0") and lines[2] == "…" and lines[-1].startswith("e0·s5")
    assert len(lines) == 5  # the legend and four rows
