"""`p` at the very start: the header says `paused` at once, not when the trainer's child process catches up."""

from __future__ import annotations

from skilltui.apps.shared.widgets.run_header import RunHeader
from skilltui.model import events as ev
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


async def test_the_header_draws_counts_each_second_and_a_change_of_state_at_once(open_training):
    """Events that only move the header's counts wait for the second's tick; a change of state does not."""
    app = make_app(open_training(("alpha",)), latency=2.0)  # the run stays in its forward pass
    async with app.run_test(size=(100, 30)) as pilot:
        main, header = app.main, app.main.query_one(RunHeader)
        await wait_for(pilot, lambda: app.view.status == "running" and app.view.in_flight)
        main.flush(force=True)
        facts = header.facts
        call = ev.Call(role="forward", backend="offline", model=None, work="alpha", input_tokens=6_000)
        app.bus.emit(call)
        main.flush()
        assert header.facts is facts  # counts only: drawn with the second
        main.tick()
        main.flush()
        assert header.facts is not facts and header.facts.tokens >= 6_000
        facts = header.facts
        app.bus.emit(ev.Paused(paused=True))
        main.flush()
        assert header.facts is not facts and header.facts.paused  # a change of state: at once
        app.stop_training("test over")
