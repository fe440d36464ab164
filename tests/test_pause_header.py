"""`p` at the very start: the header says `paused` at once, not when the trainer's child process catches up."""

from __future__ import annotations

from skilltui.components.run_header import RunHeader
from tests.support.tui import make_app, wait_for


async def test_the_header_says_paused_as_soon_as_p_is_pressed(open_training):
    app = make_app(open_training(), latency=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        header = app.main.query_one(RunHeader)
        await wait_for(pilot, lambda: app.training and header.facts is not None)
        await pilot.press("p")
        await pilot.pause()
        assert " paused " in header.render().plain, header.render().plain
        await pilot.press("p")
        await pilot.pause()
        assert " paused " not in header.render().plain
        app.stop_training("test over")
