"""The output pane's scrollbar tracks its text while it grows.

The pane updates its scrollbar itself instead of asking the screen for a layout on every
streamed write (that layout was what each key waited for), so the thumb must still say how
long the text is and where the view is in it.
"""

from __future__ import annotations

from skilltui.apps.train.output import OutputBuffer
from skilltui.apps.train.widgets.live_output import LiveOutput
from tests.support.widgets import Harness


async def test_the_scrollbar_follows_the_text_as_it_streams_and_shrinks():
    live = LiveOutput()
    async with Harness(live).run_test(size=(60, 20)) as pilot:
        buffer = OutputBuffer()
        buffer.write("".join(f"row {n}\n" for n in range(10)))
        live.follow("w", buffer)
        await pilot.pause()
        bar = live.vertical_scrollbar
        assert bar.window_virtual_size == live.virtual_size.height == 11  # ten rows and the open line
        buffer.write("".join(f"row {n}\n" for n in range(10, 200)))
        live.catch_up()
        await pilot.pause()
        assert bar.window_virtual_size == live.virtual_size.height == 201
        assert bar.window_size == live.scrollable_content_region.height
        assert live.scroll_y == live.max_scroll_y > 0  # still following the end
        assert bar.position == live.scroll_y
        live.follow("other", OutputBuffer())  # another work with no output yet: nothing to scroll
        await pilot.pause()
        assert live.max_scroll_y == 0 and live.scroll_y == 0
        assert bar.window_virtual_size == live.virtual_size.height <= 1


def bar_cells(pilot, live: LiveOutput) -> list[str]:
    """The scrollbar's column as the screen draws it: each cell's glyph and whether it is the thumb."""
    region = live.vertical_scrollbar.region
    x = region.x
    strips = pilot.app.screen._compositor.render_strips()[region.y : region.bottom]
    return [f"{seg.text}{seg.style.reverse}{seg.style.bgcolor}" for strip in strips for seg in strip.crop(x, x + 1)]


def paints_of(bar) -> list[float]:
    """The bar's position at each time it is painted from scratch (not given from what it kept)."""
    painted: list[float] = []
    render = bar.render
    bar.render = lambda: (painted.append(bar.position), render())[1]
    return painted


async def test_the_scrollbar_repaints_when_its_thumb_moves_and_only_then():
    live = LiveOutput()
    app = Harness(live)
    async with app.run_test(size=(60, 20)) as pilot:
        buffer = OutputBuffer()
        buffer.write("".join(f"row {n}\n" for n in range(2000)))
        live.follow("w", buffer)
        await pilot.pause()
        bar = live.vertical_scrollbar
        painted = paints_of(bar)
        at_end = bar_cells(pilot, live)
        # Streaming at the end of 2,000 lines: the thumb is a cell at the bottom, and stays there.
        for n in range(20):
            buffer.write(f"more {n}\n")
            live.catch_up()
            await pilot.pause()
        assert bar.window_virtual_size == live.virtual_size.height == 2021 and bar.position == live.scroll_y
        assert painted == [] and bar_cells(pilot, live) == at_end
        # The person scrolls to the top: the thumb moves, and is drawn where it went.
        live.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert painted and bar_cells(pilot, live) != at_end
        # A new theme repaints it in the theme's colours.
        painted.clear()
        app.theme = "textual-light"
        await pilot.pause()
        assert painted


async def test_switching_back_to_a_thumb_drawn_before_takes_the_kept_bar():
    """Going back and forth between two works swaps two thumbs: each is drawn once, then kept."""
    live = LiveOutput()
    app = Harness(live)
    async with app.run_test(size=(60, 20)) as pilot:
        long, short = OutputBuffer(), OutputBuffer()
        long.write("".join(f"row {n}\n" for n in range(2000)))
        short.write("".join(f"row {n}\n" for n in range(40)))
        live.follow("long", long)
        await pilot.pause()
        bar = live.vertical_scrollbar
        painted = paints_of(bar)
        cells = {}
        for work, buffer in (("short", short), ("long", long)):
            live.follow(work, buffer)
            await pilot.pause()
            cells[work] = bar_cells(pilot, live)
        assert cells["short"] != cells["long"]  # two thumbs: the short text's is longer
        painted.clear()
        for work, buffer in (("short", short), ("long", long), ("short", short)):
            live.follow(work, buffer)
            await pilot.pause()
            assert bar_cells(pilot, live) == cells[work]  # drawn where that work's thumb is
        assert painted == []  # and not painted again
