"""The app for a newcomer and at the ends: the first-start hint, the summary, progress, and a crash that says so."""

from __future__ import annotations

import pytest

from skilltui.apps.shared.widgets.run_header import RunHeader
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.model.parse import read_run
from tests.support.tui import SIZE, make_app, screen_text, wait_for, wait_for_review


async def test_the_first_start_shows_a_hint_and_the_first_review_waits_until_it_was_seen(open_training, config_home):
    opened = open_training()
    app = make_app(opened, hint=None)  # decided as on a real start: no hint-seen file yet
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "a review screen opens" in screen_text(app))
        await wait_for(pilot, lambda: app.reviews.asking is not None)
        await wait_for(pilot, lambda: "waiting for review" in app.query_one(RunHeader).render().plain)
        # The review waits under the hint instead of covering the screen the newcomer is reading.
        assert not isinstance(app.screen, ReviewScreen) and "a review screen opens" in screen_text(app)
        await pilot.press("down")
        await wait_for_review(pilot, app)
        assert (config_home / "skilltui" / "hint-seen").exists()
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)

        # The finished run says how it went and what to run next.
        # The summary is written line by line: wait for its last line, the export command. The
        # run's path is long and varies, so the next-commands line may wrap: read it unwrapped.
        def flat() -> str:
            return " ".join(screen_text(app).split())

        await wait_for(pilot, lambda: "skilltui review" in flat() and "--to DIR" in flat())
        text = flat()
        assert "run t finished" in text and "train loss" in text and "notes: 1 added" in text
        assert "skilltui export" in text and "--to DIR" in text
    opened.lock.release()
    again = make_app(open_training(), hint=None)
    assert not again.main.hinting  # seen once is enough


async def test_the_header_shows_the_steps_progress_bar(open_training):
    app = make_app(open_training())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        header = app.main.query_one(RunHeader).render().plain
        # Two works' forward and loss are done; the group's reduce is done, its backward waits for review.
        assert "▰▰▰▰▰▰▰▱ 5/6" in header and "steps 0/1" in header
        app.stop_training("test over")


async def test_a_crash_of_the_app_saves_the_traceback_in_the_run_and_records_a_failure(open_training):
    opened = open_training()
    app = make_app(opened)

    def broken() -> None:
        raise RuntimeError("a bug in a pane")

    with pytest.raises(RuntimeError, match="a bug in a pane"):
        async with app.run_test(size=SIZE) as pilot:
            await wait_for_review(pilot, app)
            app.call_later(broken)
            await wait_for(pilot, lambda: app.crash_file is not None)
    assert app.return_code == 1
    assert app.crash_file.parent == opened.run.root and "a bug in a pane" in app.crash_file.read_text()
    [finished] = [e for e in read_run(opened.run.events_path).events if e.kind == "run_finished"]
    assert finished.status == "failed" and str(app.crash_file) in finished.reason


def test_the_summary_is_printed_after_the_app_closes(open_training, monkeypatch, capsys):
    from textual.app import App

    from skilltui.agents.offline import OfflineBackend
    from skilltui.apps.train.app import TrainingApp, run_app

    async def train_then_quit(pilot) -> None:
        await wait_for(pilot, lambda: not pilot.app.training)
        await pilot.press("q")

    monkeypatch.setattr(TrainingApp, "run", lambda self: App.run(self, headless=True, auto_pilot=train_then_quit))
    opened = open_training(no_backward=True)
    assert run_app(opened, OfflineBackend(), secrets=[]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "run t finished" and out[1].startswith("train loss ")
    assert out[-1].startswith("next: skilltui review ") and out[-1].endswith("--to DIR")


def test_quitting_mid_run_says_it_stopped_once_with_how_to_resume(open_training, monkeypatch, capsys):
    from textual.app import App

    from skilltui.agents.offline import OfflineBackend
    from skilltui.apps.shared.screens.confirm import ConfirmScreen
    from skilltui.apps.train.app import TrainingApp, run_app

    async def quit_at_the_review(pilot) -> None:
        await wait_for_review(pilot, pilot.app)
        await pilot.press("escape", "q")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
        await pilot.press("y")

    monkeypatch.setattr(TrainingApp, "run", lambda self: App.run(self, headless=True, auto_pilot=quit_at_the_review))
    opened = open_training()
    assert run_app(opened, OfflineBackend(), secrets=[], hint=False) == 0
    said = capsys.readouterr()
    assert said.out.splitlines()[0] == "run t stopped: quit from the app; run the same command to resume"
    assert said.err.strip() == ""  # the summary said it; a second line saying it again was noise


async def test_the_selected_works_box_says_how_long_its_stage_has_run(open_training):
    app = make_app(open_training(), latency=0.5)
    async with app.run_test(size=SIZE) as pilot:
        box = app.main.query_one("#works-box")
        await wait_for(
            pilot, lambda: " · forward " in str(box.border_subtitle) and " · in step " in str(box.border_subtitle)
        )
        assert str(box.border_subtitle).startswith(f"{app.selected_work} · forward ")
        app.stop_training("test over")


async def test_the_works_box_foot_names_a_stage_when_it_starts_not_at_the_seconds_tick(open_training):
    # The foot was drawn with the header: at the second's tick or a change of the run's state. A
    # stage shorter than a second could fall between two ticks and never be named (the test above
    # timed out so under load); now the frame that draws the stage's row draws the foot.
    from skilltui.model import events as ev

    app = make_app(open_training(("alpha",)), latency=2.0)  # the run stays in its forward pass
    async with app.run_test(size=SIZE) as pilot:
        main, box = app.main, app.main.query_one("#works-box")
        await wait_for(pilot, lambda: " · forward " in str(box.border_subtitle))
        app.bus.emit(ev.Stage(epoch=0, step=0, work="alpha", stage="forward", status="finished", seconds=0.1))
        app.bus.emit(ev.Stage(epoch=0, step=0, work="alpha", stage="loss", status="started"))
        main.flush()  # no tick in between
        assert str(box.border_subtitle).startswith("alpha · loss "), box.border_subtitle
        app.stop_training("test over")


def test_a_crash_ends_the_command_with_one_line_naming_the_traceback_file_and_exit_1(
    open_training, monkeypatch, capsys
):
    from textual.app import App

    from skilltui.agents.offline import OfflineBackend
    from skilltui.apps.train.app import TrainingApp, run_app

    def broken() -> None:
        raise RuntimeError("a bug in a pane")

    async def crash(pilot) -> None:
        await wait_for_review(pilot, pilot.app)
        pilot.app.call_later(broken)

    monkeypatch.setattr(TrainingApp, "run", lambda self: App.run(self, headless=True, auto_pilot=crash))
    opened = open_training()
    assert run_app(opened, OfflineBackend(), secrets=[], hint=False) == 1
    err = capsys.readouterr().err.strip().splitlines()
    [crash_file] = list(opened.run.root.glob("crash-*.txt"))
    assert err[-1] == f"skilltui: the app crashed; the run is recorded as failed; traceback: {crash_file}"
    assert "Traceback" not in "\n".join(err)
