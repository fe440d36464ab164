"""The loss curve draws a row again only when the row reads otherwise, and the screen shows what it reads."""

from __future__ import annotations

from skilltui.apps.train.widgets.loss_curve import LossCurve
from skilltui.model.figures import Mean
from tests.support.widgets import Harness, painted_lines


def drawn(pilot, curve: LossCurve) -> list[str]:
    strips = pilot.app.screen._compositor.render_strips()[curve.content_region.y : curve.content_region.bottom]
    return [strip.text[curve.content_region.x : curve.content_region.right].rstrip() for strip in strips]


async def test_choosing_a_work_draws_the_rows_it_changed_and_coming_back_draws_none():
    curve = LossCurve()
    async with Harness(curve).run_test(size=(60, 16)) as pilot:
        steps = [(0, s) for s in range(4)]
        series = {work: {key: 0.2 + 0.15 * n + 0.02 * key[1] for key in steps} for n, work in enumerate("abcd")}
        curve.show(steps, series, {key: Mean(0.5, 4, 4) for key in steps})
        curve.selected = "a"
        await pilot.pause()
        assert drawn(pilot, curve) == [row.rstrip() for row in curve.render().plain.splitlines()]
        made: list[str] = []
        render_segments = type(curve.render()).render_segments

        def counting(content, *args, **kwargs):
            made.append(content.plain)
            return render_segments(content, *args, **kwargs)

        type(curve.render()).render_segments = counting
        painted = painted_lines(curve)
        try:
            curve.selected = "d"
            await pilot.pause()
            rows = [row.rstrip() for row in curve.render().plain.splitlines()]
            assert drawn(pilot, curve) == rows  # the screen shows the new selection
            assert painted and len(painted) <= 6  # the lines it changed, not the widget's 16
            # Only the legend and the rows that a's or d's points cross were drawn again.
            assert made and {row.rstrip() for row in made} < set(rows) and len(made) <= 6, made
            made.clear()
            curve.selected = "a"
            await pilot.pause()
            assert made == []  # every row of a's curve is the strip drawn before
            assert drawn(pilot, curve)[0].startswith("━● mean 0.500") and "─◆ a" in drawn(pilot, curve)[0]
        finally:
            type(curve.render()).render_segments = render_segments


async def test_new_losses_and_a_new_theme_draw_the_curve_again():
    curve = LossCurve()
    app = Harness(curve)
    async with app.run_test(size=(60, 16)) as pilot:
        steps = [(0, 0), (0, 1)]
        curve.show(steps, {"a": {(0, 0): 0.9}}, {(0, 0): Mean(0.9, 1, 1)})
        curve.selected = "a"
        await pilot.pause()
        before = drawn(pilot, curve)
        curve.show(steps, {"a": {(0, 0): 0.9, (0, 1): 0.3}}, {(0, 0): Mean(0.9, 1, 1), (0, 1): Mean(0.3, 1, 1)})
        await pilot.pause()
        after = drawn(pilot, curve)
        assert after != before and "─◆ a 0.300" in after[0]
        strip = curve.render_line(0)
        app.theme = "textual-light"
        await pilot.pause()
        assert curve.render_line(0) is not strip  # drawn in the new theme's colours
