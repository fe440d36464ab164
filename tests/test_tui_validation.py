"""Validation in the app: the gate's numbers on the review screen, the validation line on the curve."""

from __future__ import annotations

from skilltui.apps.train.widgets.loss_curve import LossCurve
from skilltui.model.figures import Mean
from tests.support.tui import SIZE, decisions, make_app, screen_text, wait_for, wait_for_review
from tests.support.validation import held_out_work
from tests.support.widgets import Harness


async def test_the_review_shows_validation_around_the_micro_step_and_the_person_decides(open_training, tmp_path):
    val = held_out_work(tmp_path / "held")
    opened = open_training(("alpha",), val_works=[val], gate=True)
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_for_review(pilot, app)
        gate = screen.request.gate
        assert gate is not None and gate.advice == "keep" and gate.after < gate.before
        text = screen_text(app)
        assert f"validation {gate.before:.3f} → {gate.after:.3f}" in text
        assert "gate advises keep" in text and "validation cost $0.0000" in text
        # The paired change, its interval (a point: the offline writer is deterministic) and n.
        assert f"Δ {gate.delta:+.3f} [{gate.low:+.3f}, {gate.high:+.3f}] at 90%, n={gate.n}" in text
        # The gate advises keep; the person rolls back anyway, and that is what counts.
        await pilot.press("u")
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.training)

        def legend() -> str:
            return app.query_one(LossCurve).render().plain.splitlines()[0]

        # The curve draws what the run sent at the app's next flush, after the run's end is known.
        await wait_for(pilot, lambda: "━▲ val" in legend())
        assert "(1 work)" in legend()
    [decision] = decisions(opened)
    assert (decision["decision"], decision["by"]) == ("rollback", "human")


async def test_a_mean_over_other_works_is_drawn_hollow_and_the_legend_says_how_many():
    curve = LossCurve()
    async with Harness(curve).run_test(size=(90, 14)) as pilot:
        steps = [(0, 0), (0, 1), (0, 2)]
        both, one = frozenset({"a", "b"}), frozenset({"a"})
        curve.show(
            steps,
            {"a": {(0, 0): 0.9, (0, 1): 0.5, (0, 2): 0.2}, "b": {(0, 0): 0.7, (0, 2): 0.2}},
            {(0, 0): Mean(0.8, 2, 2, both), (0, 1): Mean(0.5, 1, 2, one), (0, 2): Mean(0.2, 2, 2, both)},
            {key: Mean(value, 2, 2) for key, value in {(0, 0): 0.6, (0, 1): 0.4, (0, 2): 0.3}.items()},
        )
        await pilot.pause()
        lines = curve.render().plain.splitlines()
        assert lines[0].startswith("━● mean 0.200 (2 works) ○ other works")
        assert "━▲ val 0.300 (2 works)" in lines[0]
        plot = "\n".join(lines[1:-1])
        assert plot.count("○") == 1 and plot.count("●") == 2 and plot.count("▲") == 3


async def test_the_legend_mean_is_the_current_steps_and_says_how_many_works_it_covers_so_far():
    curve = LossCurve()
    async with Harness(curve).run_test(size=(90, 14)) as pilot:
        steps = [(0, 0), (0, 1)]
        series = {"a": {(0, 0): 0.9, (0, 1): 0.3}, "b": {(0, 0): 0.7}}
        # Step 1 is under way: one of its two works scored so far.
        curve.show(steps, series, {(0, 0): Mean(0.8, 2, 2, frozenset("ab")), (0, 1): Mean(0.3, 1, 2, frozenset("a"))})
        await pilot.pause()
        legend = curve.render().plain.splitlines()[0]
        assert legend.startswith("━● mean 0.300 (1 of 2 works) ○ other works")
