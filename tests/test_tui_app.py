"""The app around the review: quitting and resuming, pausing, the palette, the panes, themes."""

from __future__ import annotations

import json
import time

import pytest
from textual import screen as textual_screen

from skilltui.agents.base import FatalBackendError
from skilltui.agents.offline import OfflineBackend
from skilltui.apps.shared.screens.confirm import ConfirmScreen
from skilltui.apps.shared.screens.help import HelpScreen
from skilltui.apps.shared.themes import DEFAULT_THEME, LIGHT_THEME
from skilltui.apps.shared.widgets.report_view import ReportView
from skilltui.apps.shared.widgets.run_header import RunHeader
from skilltui.apps.train.app import TrainingApp
from skilltui.apps.train.screens.main import FRAMES_A_SECOND, HOLD_MAX, KEYS_HOLD, pace_frames
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.widgets.live_output import LiveOutput
from skilltui.apps.train.widgets.loss_curve import LossCurve
from skilltui.apps.train.widgets.works_table import WorksTable
from skilltui.model import events as ev
from skilltui.pool.notes import Pool
from tests.support.recorded import recorded
from tests.support.tui import SIZE, decisions, make_app, screen_text, wait_for, wait_for_review

# The shared fixtures, registered in this module (autouse included).


async def test_quit_while_training_asks_then_stops_and_the_same_command_resumes(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        request = (await wait_for_review(pilot, app)).request
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert app.training and isinstance(app.screen, ReviewScreen)
        await pilot.press("q", "y")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_value == 0
    assert app.outcome.status == "stopped"
    assert recorded(opened.run.events_path)[-1]["kind"] == "run_finished"
    assert decisions(opened) == []
    opened.lock.release()

    # The same settings reopen the same run; the micro-step that waited asks again,
    # without paying for another backward pass.
    again = open_training()
    assert again.resumed and again.run.root == opened.run.root
    app = make_app(again)
    async with app.run_test(size=SIZE) as pilot:
        resumed = (await wait_for_review(pilot, app)).request
        assert (resumed.after, resumed.attempt) == (request.after, 1)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    assert app.outcome.status == "finished"
    assert [(d["decision"], d["by"]) for d in decisions(again)] == [("approve", "human")]
    assert not (again.run.backward_dir(0, 0, 1) / "attempt2").exists()


async def test_quit_after_the_run_finished_does_not_ask(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
        await wait_for(pilot, lambda: "finished" in screen_text(app))
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_value == 0


class BrokenBackend(OfflineBackend):
    """The writer's backend refuses every call the way a bad key does."""

    async def agent(self, request, sandbox):
        raise FatalBackendError("the key was rejected")


async def test_a_failed_run_shows_why_and_quits_with_exit_code_1(open_training):
    opened = open_training()
    app = TrainingApp(opened, BrokenBackend(), secrets=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: not app.training)
        assert app.outcome.status == "failed" and "rejected" in app.outcome.reason
        await wait_for(pilot, lambda: "failed" in screen_text(app).splitlines()[0])
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_value == 1


async def test_p_pauses_before_the_next_stage_and_p_again_resumes(open_training):
    opened = open_training()
    app = make_app(opened, latency=0.3)

    def stages(status: str) -> list[tuple[str, str]]:
        events = recorded(opened.run.events_path)
        return [(e["stage"], e["work"]) for e in events if e["kind"] == "stage" and e["status"] == status]

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: stages("started"))
        await pilot.press("p")
        assert app.driver.paused
        in_flight = stages("started")
        # The calls in flight finish; nothing new starts while paused.
        await wait_for(pilot, lambda: len(stages("finished")) == len(in_flight))
        # Still: every work now waits at the pause gate, so no stage can start until p again.
        await wait_for(pilot, lambda: app.driver.held == len(opened.works))
        assert stages("started") == in_flight
        assert "paused" in screen_text(app).splitlines()[0]
        await pilot.press("p")
        assert not app.driver.paused
        await wait_for_review(pilot, app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    kinds = [(e["kind"], e.get("paused")) for e in recorded(opened.run.events_path) if e["kind"] == "paused"]
    assert kinds == [("paused", True), ("paused", False)]


@pytest.mark.slow
async def test_palette_pauses_resumes_and_jumps_to_a_work(open_training):
    opened = open_training(("alpha", "beta"))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        assert app.selected_work == "alpha"
        await pilot.press("ctrl+p")
        await pilot.press(*"jump to work beta")
        await wait_for(pilot, lambda: "Jump to work beta" in screen_text(app))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.selected_work == "beta")
        assert app.query_one(LiveOutput).work == "beta"
        assert app.query_one(LossCurve).selected == "beta"
        await pilot.press("ctrl+p")
        await pilot.press(*"pause after")
        await wait_for(pilot, lambda: "Pause after the current stage" in screen_text(app))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.driver.paused)
        await pilot.press("ctrl+p")
        await pilot.press(*"resume training")
        await wait_for(pilot, lambda: "Resume training" in screen_text(app))
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.driver.paused)


@pytest.mark.slow
async def test_a_review_waits_for_an_open_palette_or_dialog_instead_of_covering_it(open_training):
    from textual.command import CommandPalette

    opened = open_training()
    app = make_app(opened, latency=0.2)
    async with app.run_test(size=SIZE) as pilot:
        # The palette opens while the works are still writing; the review arrives under it.
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await wait_for(pilot, lambda: app.reviews.asking is not None)
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        # A second ctrl+p used to open a second palette over the review and crash the app.
        await pilot.press("ctrl+p")
        assert app.is_running and isinstance(app.screen, CommandPalette)
        await pilot.press("escape")
        await wait_for_review(pilot, app)
        # ctrl+c asks to quit as q does (Textual's own only says "press ctrl+q").
        await pilot.press("escape", "ctrl+c")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n", "v")
        await wait_for_review(pilot, app)
        # The same with the quit dialog: answering it still works while a review waits.
        await pilot.press("escape", "q")
        assert isinstance(app.screen, ConfirmScreen)
        app.show_review()  # what the engine's next request does
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await wait_for_review(pilot, app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    assert app.outcome.status == "finished"
    assert [(d["decision"], d["by"]) for d in decisions(opened)] == [("approve", "human")]


async def test_a_finished_run_is_unlocked_while_the_app_stays_open_on_it(open_training):
    from skilltui.runs.status import run_status
    from skilltui.store.run_folder import is_locked

    opened = open_training(("alpha",))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        assert is_locked(opened.run.root)  # while it trains, history tools must keep off
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
        await wait_for(pilot, lambda: not is_locked(opened.run.root))
        assert app.is_running
        assert run_status(opened.run).state == "finished"


async def test_palette_copies_the_run_folder_path(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape", "ctrl+p")
        await pilot.press(*"copy the run folder")
        await wait_for(pilot, lambda: "Copy the run folder path" in screen_text(app))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.clipboard == str(opened.run.root))


async def test_help_lists_the_keys(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await wait_for(pilot, lambda: "command palette" in screen_text(app))
        await pilot.press("pagedown")  # the review screen's keys are below the main screen's
        await wait_for(pilot, lambda: "roll back" in screen_text(app))
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_output_follows_the_selected_work_and_the_report_renders(open_training):
    opened = open_training(("alpha", "beta"))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        live = app.query_one(LiveOutput)
        await wait_for(pilot, lambda: "◆ loss" in "\n".join(live.lines))
        assert "── forward · epoch 0 step 0 · episodes 1-2 ──" in live.lines
        assert "  ▸ view stories/alpha.md" in live.lines
        assert any("wrote episode 1" in line for line in live.lines)
        await pilot.press("j")  # j / k move through the works as the arrows do
        await wait_for(pilot, lambda: live.work == "beta")
        await wait_for(pilot, lambda: "  ▸ view stories/beta.md" in live.lines)
        assert "  ▸ view stories/alpha.md" not in live.lines
        await pilot.press("k")
        await wait_for(pilot, lambda: live.work == "alpha")
        await pilot.press("down")
        await wait_for(pilot, lambda: live.work == "beta")
        await pilot.press("2")
        report = app.query_one(ReportView)
        await wait_for(pilot, lambda: "Loss report: beta" in report.text)
        assert "beta · epoch 0 step 0" in report.title


async def test_a_moved_cursor_selects_its_work_in_the_same_call(open_training):
    """The cursor and the output it selects are drawn in one frame: no message hop between them."""
    opened = open_training(("alpha", "beta"))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        table, live = app.query_one(WorksTable), app.query_one(LiveOutput)
        await wait_for(pilot, lambda: live.work == "alpha")
        table.move_cursor(row=1)
        # Nothing awaited: a posted message would not have reached the screen yet.
        assert (app.selected_work, live.work) == ("beta", "beta")
        table.move_cursor(row=0)
        assert live.work == "alpha"


async def test_what_streams_in_waits_while_keys_come_at_most_hold_max_then_draws_as_one_batch(open_training):
    """One throttled flush draws what the trainer sent, all of it inside one `batch_update`; while
    keys come it waits for a pause in them, but never longer than HOLD_MAX since its last draw."""
    opened = open_training(("alpha",))
    app = make_app(opened, latency=2.0)  # calls stream slowly: the run stays in its forward pass
    async with app.run_test(size=SIZE) as pilot:
        main, live = app.main, app.query_one(LiveOutput)
        await wait_for(pilot, lambda: app.view.status == "running" and app.view.in_flight and live.work == "alpha")
        header = main.query_one(RunHeader)
        batches: list[int] = []
        catch_up = live.catch_up

        def recording() -> None:
            batches.append(app._batch_count)  # Textual's count of open `batch_update`s
            catch_up()

        def shown(text: str) -> bool:
            return any(text in line for line in live.lines)

        live.catch_up = recording
        # All below is one synchronous stretch: the app's own flush timer cannot run in it.
        main.flush(force=True)
        batches.clear()
        facts = header.facts
        app.collector.touched()  # a key just came
        app.bus.emit(ev.Delta(role="forward", text="streamed while typing", work="alpha"))
        app.bus.emit(ev.PoolChanged(head="0" * 40, reason="commit"))
        main.tick()  # the header's second came round too
        main.flush()
        assert not shown("streamed while typing") and header.facts is facts  # held for a pause in the keys
        main._drawn = time.monotonic() - HOLD_MAX  # keys went on for HOLD_MAX: the stream is drawn anyway
        app.collector.touched()
        main.flush()
        assert shown("streamed while typing") and header.facts is not facts
        assert batches == [1]
        app.bus.emit(ev.Delta(role="forward", text="after the keys stopped", work="alpha"))
        main.flush()
        assert not shown("after the keys stopped")
        app.collector.last_input = time.monotonic() - KEYS_HOLD  # no key for KEYS_HOLD
        main.flush()
        assert shown("after the keys stopped")
        assert batches == [1, 1]
        app.stop_training("test over")


async def test_the_flush_catches_up_the_works_the_output_keeps_not_only_the_shown_one(open_training):
    """A work shown a moment ago gets what streamed for it in the flush's frame, so the key that
    goes back to it has nothing left to wrap or draw."""
    opened = open_training(("alpha", "beta"))
    app = make_app(opened, latency=2.0)  # calls stream slowly: the run stays in its forward pass
    async with app.run_test(size=SIZE) as pilot:
        main, live, table = app.main, app.query_one(LiveOutput), app.query_one(WorksTable)
        await wait_for(pilot, lambda: app.view.status == "running" and live.work == "alpha")
        table.move_cursor(row=1)
        await pilot.pause()  # beta's output drawn: the pane knows its width to draw alpha's ahead
        assert live.work == "beta" and "alpha" in live._kept
        app.bus.emit(ev.Delta(role="forward", text="streamed for alpha meanwhile\n", work="alpha"))
        main.flush(force=True)
        assert any("streamed for alpha meanwhile" in line for line in live._kept["alpha"].lines)
        app.stop_training("test over")


async def test_a_keys_frame_is_not_held_to_a_sixty_a_second_grid(open_training):
    """The screen draws on a 1/FRAMES_A_SECOND grid: a key pressed just after a streamed flush's
    frame waits at most that long for its own (Textual 8.2's screen timer, pinned, is the grid)."""
    opened = open_training(("alpha",))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.selected_work == "alpha")
        assert app.screen._update_timer._interval == 1 / FRAMES_A_SECOND
        assert FRAMES_A_SECOND >= 4 * 60
        app.stop_training("test over")


def test_a_frame_rate_the_person_set_wins(monkeypatch):
    monkeypatch.setattr(textual_screen, "UPDATE_PERIOD", 1 / 60)
    monkeypatch.setenv("TEXTUAL_FPS", "30")
    pace_frames()
    assert textual_screen.UPDATE_PERIOD == 1 / 60  # Textual read TEXTUAL_FPS itself
    monkeypatch.delenv("TEXTUAL_FPS")
    pace_frames()
    assert textual_screen.UPDATE_PERIOD == 1 / FRAMES_A_SECOND


async def test_streamed_text_reaches_the_log_in_batches_not_per_delta(open_training):
    opened = open_training(("alpha",))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        live = app.query_one(LiveOutput)
        writes = []
        original = live.write

        def counting_write(data, scroll_end=None):
            writes.append(data)
            return original(data, scroll_end)

        live.write = counting_write
        for n in range(500):
            app.bus.emit(ev.Delta(role="forward", text=f"piece {n} ", work="alpha"))
        await wait_for(pilot, lambda: "piece 499" in "".join(writes))
        assert len(writes) <= 3
        assert "piece 0 piece 1 " in "".join(writes)


async def test_works_table_tracks_stage_episodes_and_loss(open_training):
    opened = open_training(("alpha", "beta"))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("escape")
        table = app.query_one(WorksTable)
        await wait_for(pilot, lambda: table.get_cell("alpha", "stage").plain == "done")
        assert table.get_cell("alpha", "eps") == "2/2"
        loss = [e for e in recorded(opened.run.events_path) if e["kind"] == "loss" and e["work"] == "alpha"][0]
        assert table.get_cell("alpha", "loss") == f"{loss['loss']:.3f}"
        curve = app.query_one(LossCurve)
        assert "◆" in str(curve.render())


async def test_theme_toggle_is_remembered_for_the_next_start(open_training, config_home):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == DEFAULT_THEME
        await pilot.press("t")
        assert app.theme == LIGHT_THEME
        await wait_for(pilot, lambda: (config_home / "skilltui" / "tui.json").exists())
        app.stop_training("test over")
    saved = json.loads((config_home / "skilltui" / "tui.json").read_text())
    assert saved["theme"] == LIGHT_THEME
    opened.lock.release()
    again = make_app(open_training())
    async with again.run_test(size=SIZE) as pilot:
        assert again.theme == LIGHT_THEME
        again.stop_training("test over")


async def test_user_themes_load_from_the_config_folder_and_a_broken_one_is_skipped(open_training, config_home):
    folder = config_home / "skilltui" / "themes"
    folder.mkdir(parents=True)
    (folder / "plum.toml").write_text('name = "plum"\nprimary = "#8E4585"\nbackground = "#1E1420"\n')
    (folder / "broken.toml").write_text('name = "broken"\nprimary = "not a colour"\n')
    app = make_app(open_training())
    async with app.run_test(size=SIZE) as pilot:
        assert "plum" in app.available_themes
        assert "broken" not in app.available_themes
        assert any("broken.toml" in problem for problem in app._theme_problems)
        app.theme = "plum"
        await pilot.pause()
        app.stop_training("test over")
    assert app.theme == "plum"


async def test_the_pool_pane_renders_the_note_a_micro_step_added(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        request = (await wait_for_review(pilot, app)).request
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
        await pilot.press("3")
        # With no note chosen yet, the pane opens the first one.
        note_view = app.query_one("#note-view")
        await wait_for(pilot, lambda: note_view.path == request.added[0])
        text = (Pool(opened.run.memory).root / request.added[0]).read_text()
        description = text.split("description:", 1)[1].splitlines()[0].strip().strip("'")
        await wait_for(pilot, lambda: description[:30] in screen_text(app))
        await pilot.press("4")
        diff = app.query_one("#commit-diff")
        await wait_for(pilot, lambda: diff.patch and request.added[0] in diff.patch)
        assert [f.path for f in diff.files] == request.added
