"""A resumed run's app does not keep the banner its last session ended with while it trains again."""

from __future__ import annotations

from textual.widgets import Static

from tests.support.tui import make_app, wait_for


async def test_the_old_sessions_end_banner_is_cleared_on_resume(open_training):
    first = open_training()
    app = make_app(first, latency=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.training)
        app.stop_training("test over")
        summary = app.main.query_one("#summary", Static)
        await wait_for(pilot, lambda: summary.display and "stopped" in str(summary.render()))
    first.lock.release()

    again = make_app(open_training(), latency=0.5)
    async with again.run_test(size=(80, 24)) as pilot:
        # The new session trains and has drawn its first stage.
        await wait_for(pilot, lambda: again.main.view.active and again.main.view.current is not None)
        banner = again.main.query_one("#summary", Static)
        # The screen draws what the run did at its next flush: wait for that, while the session still trains
        # (before the fix the old banner stayed up until this session ended).
        await wait_for(pilot, lambda: not banner.display or not again.main.view.active)
        assert again.main.view.active and not banner.display, str(banner.render())
        again.stop_training("test over")
        await wait_for(pilot, lambda: banner.display)  # the new session's own end shows it again
