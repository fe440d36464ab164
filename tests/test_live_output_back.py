"""Coming back to a work in the output pane: its rows as wrapped before, and what it gained since."""

from __future__ import annotations

import skilltui.apps.train.output as output
import skilltui.apps.train.widgets.live_output as live_output
from skilltui.apps.train.output import OutputBuffer
from skilltui.apps.train.widgets.live_output import LiveOutput
from tests.support.widgets import Harness


def screen_lines(pilot) -> list[str]:
    return [strip.text.rstrip() for strip in pilot.app.screen._compositor.render_strips()]


def two_works() -> tuple[OutputBuffer, OutputBuffer]:
    """Two works of 300 lines each; the first's lines wrap to several rows."""
    a, b = OutputBuffer(), OutputBuffer()
    a.write("".join(f"alpha line {n} " * 6 + "\n" for n in range(300)))
    b.write("".join(f"beta line {n}\n" for n in range(300)))
    return a, b


async def as_a_fresh_pane_shows_it(pilot, live: LiveOutput, buffer: OutputBuffer) -> list[str]:
    """The screen with a pane that never saw the work before in place of `live`."""
    fresh = LiveOutput()
    await pilot.app.screen.mount(fresh, before=live)
    live.display = False
    fresh.follow("a", buffer)
    await pilot.pause()
    return screen_lines(pilot)


async def test_coming_back_wraps_only_the_new_text_and_shows_what_a_reload_shows(monkeypatch):
    live = LiveOutput()
    async with Harness(live).run_test(size=(60, 12)) as pilot:
        a, b = two_works()
        live.follow("a", a)
        live.follow("b", b)
        await pilot.pause()
        wrapped: list[str] = []
        wrap_spans = live_output.wrap_spans

        def counting(line: str, width: int):
            wrapped.append(line)
            return wrap_spans(line, width)

        monkeypatch.setattr(live_output, "wrap_spans", counting)  # wrapping everything again
        monkeypatch.setattr(output, "wrap_spans", counting)  # wrapping what streamed in
        a.write("alpha gained this\n")
        live.follow("a", a)
        await pilot.pause()
        assert len(wrapped) <= 2 and "alpha gained this" in wrapped, wrapped  # not all 300 lines again
        back = screen_lines(pilot)
        assert "alpha gained this" in back[-2] and live.scroll_y == live.max_scroll_y
        assert await as_a_fresh_pane_shows_it(pilot, live, a) == back


async def test_a_search_or_a_theme_drops_what_was_kept():
    live = LiveOutput()
    app = Harness(live)
    async with app.run_test(size=(60, 12)) as pilot:
        a, b = OutputBuffer(), OutputBuffer()
        a.write("alpha\n" * 50)
        b.write("beta\n" * 50)
        live.follow("a", a)
        live.follow("b", b)
        assert set(live._kept) == {"a"}
        live.search("beta")
        assert live._kept == {}
        live.action_end_search()
        live.follow("a", a)
        live.follow("b", b)
        app.theme = "textual-light"
        await pilot.pause()
        assert live._kept == {}
        for work in "cdefg":  # only the last few works are kept
            buffer = OutputBuffer()
            buffer.write(f"{work}\n")
            live.follow(work, buffer)
        assert len(live._kept) == live_output.KEPT_WORKS


async def test_a_kept_work_is_caught_up_and_drawn_in_the_streams_frame_not_in_the_key(monkeypatch):
    """What a kept work gains is wrapped and its last rows drawn as the stream is drawn: going back
    to it wraps nothing and draws no row anew, and shows what a pane that never saw it shows."""
    live = LiveOutput()
    async with Harness(live).run_test(size=(60, 12)) as pilot:
        a, b = two_works()
        live.follow("a", a)
        await pilot.pause()
        live.follow("b", b)
        await pilot.pause()
        a.write("alpha gained this, " * 9 + "\nand a last open line")
        live.catch_up_kept({"a", "b", "never shown"})
        wrapped: list[str] = []
        drawn: list[tuple[int, int, int]] = []
        row_strip, wrap_spans = live._row_strip, output.wrap_spans
        monkeypatch.setattr(
            output, "wrap_spans", lambda line, width: (wrapped.append(line), wrap_spans(line, width))[1]
        )
        monkeypatch.setattr(live, "_row_strip", lambda *key: (drawn.append(key[:3]), row_strip(*key))[1])
        live.follow("a", a)
        await pilot.pause()
        assert wrapped == [] and drawn == []
        back = screen_lines(pilot)
        assert "and a last open line" in back[-1] and live.scroll_y == live.max_scroll_y
        monkeypatch.undo()
        assert await as_a_fresh_pane_shows_it(pilot, live, a) == back


async def test_a_kept_work_whose_buffer_dropped_unseen_text_is_reloaded_when_shown():
    live = LiveOutput()
    async with Harness(live).run_test(size=(60, 12)) as pilot:
        a, b = OutputBuffer(limit=2000), OutputBuffer()
        a.write("first\n")
        b.write("beta\n")
        live.follow("a", a)
        await pilot.pause()
        live.follow("b", b)
        await pilot.pause()
        a.write("".join(f"later {n}\n" for n in range(400)))  # more than the buffer keeps
        live.catch_up_kept({"a"})
        assert "a" not in live._kept
        live.follow("a", a)
        await pilot.pause()
        assert live.lines[0] != "first" and live.lines[-1] == "later 399"
