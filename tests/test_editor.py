"""`e` on a note opens it in $EDITOR: refused while training runs, a linted hand commit after."""

from __future__ import annotations

import contextlib

import pytest
from textual.app import App

from skilltui.apps.train.widgets.pool_tree import PoolTree
from skilltui.pool.notes import Pool
from tests.support.recorded import recorded
from tests.support.tui import SIZE, make_app, stub_editor, wait_for, wait_for_review


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


async def choose_first_note(pilot, app) -> str:
    await pilot.press("3")
    tree = app.query_one(PoolTree)
    await wait_for(pilot, lambda: bool(tree.notes))
    tree.focus()
    path = tree.notes[0][0]
    node = next(n for n in tree._tree_lines if n.node.data == path).node  # noqa: SLF001
    tree.move_cursor(node)
    await pilot.pause()
    return path


@pytest.mark.subprocess
async def test_e_on_a_note_of_a_finished_run_commits_a_linted_hand_edit(open_training, tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", str(stub_editor(tmp_path, "Keep each cue on its own line.")))
    monkeypatch.delenv("VISUAL", raising=False)
    # The headless test driver cannot hand the terminal over; the editor runs all the same.
    monkeypatch.setattr(App, "suspend", lambda self: contextlib.nullcontext())
    opened = open_training()
    app = make_app(opened)
    pool = Pool(opened.run.memory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
        path = await choose_first_note(pilot, app)
        before = pool.head()
        await pilot.press("e")
        await wait_for(pilot, lambda: pool.head() != before)
        assert pool.git("log", "-1", "--format=%s") == f"hand edit: {path}"
        assert (pool.root / path).read_text(encoding="utf-8").endswith("Keep each cue on its own line.\n")
        assert any("committed your edit" in n for n in notices(app))
    history = [e for e in recorded(opened.run.events_path) if e["kind"] == "history"]
    assert [(h["action"], h["target"]) for h in history] == [("edit", path)]


async def test_e_while_training_runs_says_it_is_not_allowed(open_training, tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", str(stub_editor(tmp_path, "never")))
    opened = open_training(steps=2, episodes=4)
    app = make_app(opened)
    pool = Pool(opened.run.memory)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("a")
        await wait_for_review(pilot, app)  # the second step's review: training still runs
        await pilot.press("escape")
        head = pool.head()
        await choose_first_note(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: any("while training runs is not allowed" in n for n in notices(app)))
        assert pool.head() == head
        app.stop_training("test over")


async def first_diff(pilot, app) -> str:
    """Open the newest commit's diff in the history browser; the path of the note on view."""
    from skilltui.apps.shared.screens.diff import DiffScreen

    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
    return app.screen.files[0].path


@pytest.fixture
def finished_run(copied_run):
    return copied_run("pale-harbour")


@pytest.mark.subprocess
async def test_e_in_the_history_browsers_diff_edits_the_note_on_view(finished_run, tmp_path, monkeypatch):
    from skilltui.apps.history.app import HistoryApp

    monkeypatch.setenv("EDITOR", str(stub_editor(tmp_path, "Name the time of day in every heading.")))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setattr(App, "suspend", lambda self: contextlib.nullcontext())
    run = finished_run
    pool = run.pool
    before = pool.head()
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        path = await first_diff(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: pool.head() != before)
    assert pool.git("log", "-1", "--format=%s") == f"hand edit: {path}"
    assert (pool.root / path).read_text(encoding="utf-8").endswith("Name the time of day in every heading.\n")


async def test_b_in_the_history_browsers_diff_shows_the_notes_blame(finished_run):
    from skilltui.apps.history.app import HistoryApp
    from skilltui.apps.shared.screens.blame import BlameScreen
    from skilltui.runs.blame import blame, blame_text

    app = HistoryApp(finished_run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        path = await first_diff(pilot, app)
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, BlameScreen))
        shown = str(app.screen.query_one("#blame-lines").render())
    assert shown == "\n".join(blame_text(blame(finished_run, path)))  # the same lines as `skilltui blame`
