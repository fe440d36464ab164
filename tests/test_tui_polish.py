"""The app at its edges: a resize while a work streams, the smallest size, searching and
resuming the output, the report tab's step, the review screen's keys, the palette."""

from __future__ import annotations

import re

from skilltui.apps.shared.screens.help import HelpScreen
from skilltui.apps.shared.widgets.report_view import ReportView
from skilltui.apps.train.output import OutputBuffer, wrap_spans
from skilltui.apps.train.widgets.live_output import LiveOutput
from skilltui.apps.train.widgets.pool_tree import PoolTree
from skilltui.apps.train.widgets.works_table import WorksTable
from skilltui.model import events as ev
from tests.support.tui import make_app, screen_text, wait_for, wait_for_review
from tests.support.widgets import Harness


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def visible(live: LiveOutput) -> str:
    return "\n".join(live.render_line(y).text for y in range(live.scrollable_content_region.height))


async def stream(pilot, app, work: str, lines: range) -> None:
    for n in lines:
        app.bus.emit(ev.Delta(role="forward", text=f"streamed line {n}\n", work=work))
    live = app.query_one(LiveOutput)
    await wait_for(pilot, lambda: f"streamed line {lines[-1]}" in live.lines)


async def main_screen_with_output(pilot, app, lines: range) -> LiveOutput:
    """Past the first review to the main screen, with `lines` streamed into alpha's output."""
    await wait_for_review(pilot, app)
    await pilot.press("escape")
    await stream(pilot, app, "alpha", lines)
    return app.query_one(LiveOutput)


async def test_output_goes_on_following_the_stream_after_the_terminal_shrinks(open_training):
    app = make_app(open_training(("alpha",)))
    async with app.run_test(size=(120, 40)) as pilot:
        live = await main_screen_with_output(pilot, app, range(200))
        await wait_for(pilot, lambda: "streamed line 199" in visible(live))
        await pilot.resize_terminal(100, 26)  # the pane loses rows while the work streams
        await pilot.pause()
        await stream(pilot, app, "alpha", range(200, 260))
        await wait_for(pilot, lambda: "streamed line 259" in visible(live))
        await pilot.resize_terminal(130, 44)
        await stream(pilot, app, "alpha", range(260, 270))
        await wait_for(pilot, lambda: "streamed line 269" in visible(live))


async def test_output_stays_where_the_person_scrolled_back_to():
    live = LiveOutput()
    async with Harness(live).run_test(size=(60, 20)) as pilot:
        buffer = OutputBuffer()
        buffer.write("".join(f"row {n}\n" for n in range(100)))
        live.follow("w", buffer)
        await pilot.pause()
        live.focus()
        await pilot.press("pageup")
        top = live.scroll_y
        buffer.write("row 100\n")
        live.catch_up()
        await pilot.pause()
        assert live.scroll_y == top and "row 100" not in visible(live)
        await pilot.press("end")  # back at the end: following again
        buffer.write("row 101\n")
        live.catch_up()
        await pilot.pause()
        assert "row 101" in visible(live)


def test_long_lines_wrap_at_word_boundaries_and_only_cut_words_longer_than_the_pane():
    line = "The kettle boils while Mara counts the cups on the shelf above the sink"
    rows = [line[a:b] for a, b in wrap_spans(line, 20)]
    assert all(len(row) <= 20 for row in rows)
    assert " ".join(rows) == line  # no word cut in two, no word lost
    word = "x" * 45
    assert [word[a:b] for a, b in wrap_spans(word, 20)] == ["x" * 20, "x" * 20, "x" * 5]
    assert wrap_spans("short", 20) == [(0, 5)]


LONG_LINE = "The writer opens the scene in a kitchen at night where Mara waits.\n"


def following(live: LiveOutput, text: str) -> OutputBuffer:
    buffer = OutputBuffer()
    buffer.write(text)
    live.follow("w", buffer)
    return buffer


async def test_the_pane_draws_long_lines_wrapped_and_wraps_again_on_resize():
    live = LiveOutput()
    async with Harness(live).run_test(size=(40, 12)) as pilot:
        buffer = following(live, LONG_LINE)
        await pilot.pause()
        drawn = [row.rstrip() for row in visible(live).splitlines() if row.strip()]
        assert drawn[0] == "The writer opens the scene in a"
        assert " ".join(drawn) == "The writer opens the scene in a kitchen at night where Mara waits."
        await pilot.resize_terminal(80, 12)
        await pilot.pause()
        assert visible(live).splitlines()[0].rstrip() == buffer.text().strip()


async def test_slash_searches_the_output_and_n_and_shift_n_walk_the_matches(open_training):
    app = make_app(open_training(("alpha",)))
    async with app.run_test(size=(120, 36)) as pilot:
        live = await main_screen_with_output(pilot, app, range(40))
        live.focus()
        await wait_for(pilot, lambda: live.has_focus)
        assert "Next match" not in screen_text(app)  # no search yet: n / N / esc are not offered
        await pilot.press("slash")
        await wait_for(pilot, lambda: "search output /" in screen_text(app))  # the prompt says what it is
        await pilot.press(*"line", "space", "3", "enter")  # line 3, line 30..39: 11 matches
        await wait_for(pilot, lambda: "of 11" in live.status)
        assert live.has_focus
        assert "/ Search" in screen_text(app) and "n Next match" in screen_text(app)
        # The search starts at the first match from the top of the view, as `less` does.
        first = int(re.search(r"match (\d+) of", live.status)[1])
        assert 1 <= first <= 11
        await pilot.press("home", "n")
        assert "match 1 of 11" in live.status  # from the top: the first match, line 3
        await pilot.press("n")
        assert "match 2 of 11" in live.status
        await pilot.press("N", "N")
        assert "match 11 of 11" in live.status  # wrapped round to the last
        assert "match 11 of 11" in visible(live)  # the status line is drawn in the pane
        assert "streamed line 39" in visible(live)
        await pilot.press("escape")
        assert live.status == "" and live.search_text == ""
        await wait_for(pilot, lambda: "Next match" not in screen_text(app))  # the search's keys went with it


async def test_j_and_k_choose_a_work_while_a_search_holds_the_keys(open_training):
    """After `/` the output pane has the focus (for n / N); j / k were dead there until tab."""
    app = make_app(open_training(("alpha", "beta", "gamma")))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        table, live = app.query_one(WorksTable), app.query_one(LiveOutput)
        await pilot.press("slash", *"forward", "enter")
        await wait_for(pilot, lambda: live.has_focus and bool(live.search_text))
        row = table.cursor_row
        await pilot.press("j")
        await wait_for(pilot, lambda: table.cursor_row == row + 1)
        await pilot.press("k")
        await wait_for(pilot, lambda: table.cursor_row == row)
        assert live.has_focus and live.search_text == "forward"  # the search and its n / N stay


async def test_j_and_k_move_in_the_pool_tree_that_3_gives_the_keys_to(open_training):
    app = make_app(open_training(("alpha",)))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
        await pilot.press("3")
        tree = app.query_one(PoolTree)
        await wait_for(pilot, lambda: tree.has_focus and tree.cursor_line == tree.last_line > 0)
        line = tree.cursor_line  # on the last note: k first
        await pilot.press("k")
        await wait_for(pilot, lambda: tree.cursor_line == line - 1)
        await pilot.press("j")
        await wait_for(pilot, lambda: tree.cursor_line == line)


async def test_a_resumed_run_shows_the_finished_steps_output_from_its_transcripts(open_training):
    opened = open_training(("alpha",))
    app = make_app(opened)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_review(pilot, app)
        first = list(app.query_one(LiveOutput).lines)
        await pilot.press("q", "y")
        await wait_for(pilot, lambda: not app.is_running)
    opened.lock.release()
    assert "  ▸ view stories/alpha.md" in first

    app = make_app(open_training(("alpha",)))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        lines = app.query_one(LiveOutput).lines
        assert "── forward · epoch 0 step 0 · done in an earlier session ──" in lines
        assert "── loss · epoch 0 step 0 · done in an earlier session ──" in lines
        assert "  ▸ view stories/alpha.md" in lines  # the writer's tools, read back from the transcript
        assert not any("already done, skipped" in line for line in lines)
        # The works table counts the episodes written in the earlier session, not 0 of 2.
        await wait_for(pilot, lambda: "2/2" in screen_text(app))
        assert app.view.works["alpha"].episodes == 2


async def test_the_report_tab_names_its_step_and_the_brackets_say_when_there_is_no_other(open_training):
    app = make_app(open_training(("alpha",), steps=2, episodes=4))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("a")
        await wait_for_review(pilot, app)  # the second step's micro-step
        await pilot.press("escape", "2")
        report = app.query_one(ReportView)
        tab = app.query_one("#panes").get_tab("report")
        await wait_for(pilot, lambda: str(tab.label) == "Report · epoch 0 step 1")
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: str(tab.label) == "Report · epoch 0 step 0")
        assert "epoch 0 step 0" in report.title
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: any("first loss report of" in n for n in notices(app)))
        await pilot.press("right_square_bracket", "right_square_bracket")
        await wait_for(pilot, lambda: any("latest loss report" in n for n in notices(app)))
        assert str(tab.label) == "Report · epoch 0 step 1"


async def test_the_review_screen_has_shown_keys_for_evidence_scrolling_and_help(open_training):
    app = make_app(open_training(("alpha", "beta")))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_review(pilot, app)
        text = screen_text(app)
        assert "[ ] evidence" in text and "↑↓ scroll" in text and "? Help" in text
        tabs = screen.query_one("#evidence-tabs")
        assert tabs.active == "evidence-summary"
        await pilot.press("right_square_bracket")
        assert tabs.active == "evidence-0"
        assert screen.query_one("#review-evidence").border_title == "evidence 2 of 3  [ ]"
        assert "Loss report: alpha" in screen.query_one(ReportView).text
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert tabs.active == "evidence-summary"
        assert any("first piece of evidence" in n for n in notices(app))
        await pilot.press("tab")
        assert screen.query_one(ReportView).has_focus
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        # Opened from the review, the help starts with the review's keys (in sight at 80x24).
        assert app.screen.screens[0] == "review"
        text = screen_text(app)
        assert "Review screen" in text
        assert "Main screen" not in text or text.index("Review screen") < text.index("Main screen")
        await pilot.press("escape")
        assert app.screen is screen
        # `/` searches the main screen's output: not offered here, and it opens nothing.
        assert "/ Search" not in screen_text(app)
        await pilot.press("slash")
        assert app.screen is screen


async def test_at_80x24_the_works_table_leaves_the_curve_a_fair_share_and_the_help_says_it_scrolls(open_training):
    long = "the-lighthouse-keepers-of-the-northern-archipelago"
    app = make_app(open_training(("harbour", "quarry", long)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        await pilot.pause()
        table = app.query_one(WorksTable)
        assert table.region.right <= 80
        # A long name is cut with … and its row still shows its loss; tokens and cost are the header's.
        rows = [line for line in screen_text(app).splitlines() if "the-lighthous…" in line]
        assert rows and "0." in rows[0]
        assert [key for _, key, _ in table.columns_shown] == ["work", "stage", "eps", "loss"]
        assert "tok" in screen_text(app).splitlines()[0] and "$" in screen_text(app).splitlines()[0]
        assert app.query_one("#curve").outer_size.width >= 36  # it had ~20 beside the full table
        table.move_cursor(row=2)
        await pilot.resize_terminal(160, 45)
        await wait_for(pilot, lambda: not table.compact)
        # Wide again: every column is back and the cursor is still on its work.
        assert "tokens" in screen_text(app) and "cost" in screen_text(app)
        assert table.chosen == long
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: table.compact)
        await pilot.press("question_mark")
        help_screen = app.screen
        await wait_for(pilot, lambda: "more lines below" in screen_text(app))
        assert help_screen.more_below
        await pilot.press("end")
        await wait_for(pilot, lambda: not help_screen.more_below)
        assert "more lines below" not in screen_text(app)


async def test_at_160x45_the_works_table_takes_the_width_of_its_content(open_training):
    app = make_app(open_training(("harbour", "quarry")))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        await pilot.pause()
        table = app.query_one(WorksTable)
        # Each column's text and a blank each side; the work column is as wide as "harbour".
        content = sum((width or len("harbour")) + 2 for _, _, width in table.columns_shown)
        assert table.size.width == content
        assert app.query_one("#works-box").outer_size.width <= content + 4  # its border and scrollbar
        assert app.query_one("#curve").outer_size.width >= 90  # the rest goes to the loss curve


async def test_the_palette_has_one_theme_entry_and_copying_the_path_says_what_was_tried(open_training, monkeypatch):
    app = make_app(open_training(("alpha",)))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Switch theme" in titles and "Theme" not in titles
        assert not {"Keys", "Maximize", "Screenshot"} & set(titles)  # Textual's developer entries
        # The theme picker offers the shipped dark and light themes (and the user's), not Textual's set.
        from skilltui.apps.shared.palette import OwnThemes
        from skilltui.apps.shared.themes import DEFAULT_THEME, LIGHT_THEME

        provider = OwnThemes(app.screen)
        hits = [h async for h in provider.discover()]
        offered = [hit.text for hit in hits]
        assert DEFAULT_THEME in offered and LIGHT_THEME in offered
        assert "textual-dark" not in offered and "nord" not in offered
        next(hit for hit in hits if hit.text == LIGHT_THEME).command()
        assert app.theme == LIGHT_THEME
        monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
        app.action_copy_run_path()
        await wait_for(pilot, lambda: "OSC 52" in notices(app)[-1])
        message = notices(app)[-1]
        assert str(app.run_dir) in message and "OSC 52" in message and "set-clipboard on" in message
        assert "copied" not in message


async def test_a_mouse_selection_in_the_output_takes_the_text_it_covers():
    live = LiveOutput()
    async with Harness(live).run_test(size=(40, 12)) as pilot:
        following(live, LONG_LINE)
        await pilot.pause()
        await pilot.mouse_down(live, offset=(1, 0))  # the pane's padding is one column
        await pilot.hover(live, offset=(10, 1))
        await pilot.mouse_up(live, offset=(10, 1))
        await pilot.pause()
        assert pilot.app.screen.get_selected_text() == "The writer opens the scene in a\nkitchen at"
