"""The review of every backward micro-step, driven with Pilot on the offline engine.

Each test trains fresh works the project never saw, waits for the review screen and
presses the keys a person would; what it checks is what the engine recorded and where
the pool ended up, not what the screen happened to print.
"""

from __future__ import annotations

from skilltui.apps.shared.screens.confirm import ConfirmScreen
from skilltui.apps.shared.themes import DEFAULT_THEME
from skilltui.apps.shared.widgets.commit_list import CommitList
from skilltui.apps.train.screens.rerun_note import RerunNoteScreen
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.widgets.pool_tree import PoolTree
from skilltui.model.commits import PENDING
from skilltui.pool.notes import Pool, render_note
from tests.support.recorded import recorded
from tests.support.tui import SIZE, decisions, make_app, screen_text, wait_for, wait_for_review

# The shared fixtures, registered in this module (autouse included).


async def test_review_screen_shows_the_micro_step_and_names_its_keys(open_training):
    opened = open_training(("alpha", "beta"))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_for_review(pilot, app)
        request = screen.request
        text = screen_text(app)
        assert request.label in text
        assert "a  approve" in text and "u  roll back" in text and "r  rerun" in text
        assert "lint ✓ pool clean" in text
        for path in request.added:
            assert f"+ {path}" in text
        # The evidence it acted on: a commonality report for two works, and each work's report.
        assert "Commonality report" in text
        assert set(request.works) == {"alpha", "beta"}


async def test_the_review_shows_the_pool_lint_the_engine_recorded_when_the_backward_began(open_training):
    opened = open_training(("alpha",))
    pool = Pool(opened.run.memory)
    # A note outside the fixed folders, committed by hand before training: the update will not
    # touch it, so it passes its own checks, and the reviewer should still hear about it.
    (opened.run.memory / "stray.md").write_text(render_note("A note outside the folders.", "Body."))
    pool.git("add", "-A")
    pool.git("commit", "-q", "-m", "a note outside the folders")
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_for_review(pilot, app)
        text = screen_text(app)
        assert not screen.request.lint_ok
        assert "lint ✗ 1 in the pool before" in text
        assert any("stray.md" in p for p in screen.request.lint_problems)
        assert f"✗ {screen.request.lint_problems[0]}"[:60] in text
        recorded = (opened.run.backward_dir(0, 0, 1) / "lint_report.txt").read_text(encoding="utf-8")
        assert screen.request.lint_problems == [line for line in recorded.splitlines() if line.strip()]
        assert "lint ✓" not in text


async def test_approve_keeps_the_commit_and_records_a_human_decision(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        request = (await wait_for_review(pilot, app)).request
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
        assert app.outcome.status == "finished"
        # The pool tree and the commit list show the commit once their tabs are shown (a
        # hidden pane is not rebuilt on every commit, but catches up when it comes into view).
        await pilot.press("3")
        await wait_for(pilot, lambda: request.added[0] in dict(app.query_one(PoolTree).notes))
        await pilot.press("4")
        # The list is read again after the decision (in a thread): wait until it says what was decided.
        table = app.query_one(CommitList)
        await wait_for(pilot, lambda: bool(table.commits) and table.commits[0].mark not in (None, PENDING))
        commits = table.commits
        [decision] = decisions(opened)
        # The commit reviewed, kept with its provenance trailers: the same notes, the decision's commit.
        assert commits[0].sha == decision["after"]
        assert (commits[0].mark.decision, commits[0].mark.by) == ("approve", "human")
    assert (decision["decision"], decision["by"]) == ("approve", "human")
    pool = Pool(opened.run.memory)
    assert pool.head() == decision["after"]
    assert pool.git("rev-parse", "HEAD^{tree}") == pool.git("rev-parse", f"{request.after}^{{tree}}")
    assert "Skilltui-Decision: kept by human" in pool.git("log", "-1", "--format=%B")


async def test_roll_back_asks_for_y_then_returns_the_pool_to_the_commit_before(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        request = (await wait_for_review(pilot, app)).request
        await pilot.press("u")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # "no" goes back to the review, nothing rolled back
        assert isinstance(app.screen, ReviewScreen)
        assert decisions(opened) == []
        await pilot.press("u")
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.training)
    [decision] = decisions(opened)
    assert (decision["decision"], decision["by"]) == ("rollback", "human")
    pool = Pool(opened.run.memory)
    assert pool.head() == request.before
    assert request.added[0] not in pool.note_paths()


async def test_rerun_note_reaches_the_next_backward_prompt(open_training):
    opened = open_training()
    app = make_app(opened)
    note = "keep notes under ten lines, plum"
    async with app.run_test(size=SIZE) as pilot:
        first = (await wait_for_review(pilot, app)).request
        await pilot.press("r")
        assert isinstance(app.screen, RerunNoteScreen)
        await pilot.press(*note)
        # The note's letters went into the note, not to the app's keys (t: theme, p: pause).
        assert app.screen.query_one("#note").value == note
        assert app.theme == DEFAULT_THEME and not app.driver.paused
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.request.attempt == 2)
        second = app.screen.request
        assert second.before == first.before
        # The rerun's review shows the note it acted on, beside what the attempt did.
        assert second.reviewer_notes == [note] and first.reviewer_notes == []
        await wait_for(pilot, lambda: f"your note {note}" in screen_text(app))
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    prompt = (opened.run.backward_dir(0, 0, 1) / "attempt2" / "prompt.md").read_text(encoding="utf-8")
    assert note in prompt
    assert note not in (opened.run.backward_dir(0, 0, 1) / "attempt1" / "prompt.md").read_text(encoding="utf-8")
    assert [(d["decision"], d["by"], d["note"]) for d in decisions(opened)] == [
        ("rerun", "human", note),
        ("approve", "human", ""),
    ]


async def test_escape_on_the_rerun_note_goes_back_to_the_review_without_deciding(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        await pilot.press("r", "x", "escape")
        assert isinstance(app.screen, ReviewScreen)
        assert decisions(opened) == []
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    assert [d["decision"] for d in decisions(opened)] == ["approve"]


async def test_later_hides_the_review_and_v_brings_it_back(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        request = (await wait_for_review(pilot, app)).request
        await pilot.press("escape")
        assert not isinstance(app.screen, ReviewScreen)
        assert "waiting for review" in screen_text(app)
        await pilot.press("v")
        screen = await wait_for_review(pilot, app)
        assert screen.request == request
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    assert [d["by"] for d in decisions(opened)] == ["human"]


async def test_every_micro_step_of_a_step_is_reviewed_in_order(open_training):
    opened = open_training(("alpha", "beta", "gamma"), group_size=2)
    app = make_app(opened)
    seen = []
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(2):
            request = (await wait_for_review(pilot, app)).request
            seen.append((request.group, tuple(request.works)))
            await pilot.press("a")
            await wait_for(pilot, lambda r=request: getattr(app.screen, "request", None) is not r)
        await wait_for(pilot, lambda: not app.training)
    assert seen == [(1, ("alpha", "beta")), (2, ("gamma",))]
    assert [(d["group"], d["by"]) for d in decisions(opened)] == [(1, "human"), (2, "human")]
    kinds = [e["kind"] for e in recorded(opened.run.events_path)]
    assert kinds[-1] == "run_finished"


async def test_the_review_names_the_commit_approving_keeps_not_the_agents(open_training):
    """The agent's commit is stamped with its trailers when decided: that stamped id is what history
    holds, so it is the one the review's header names."""
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        request = (await wait_for_review(pilot, app)).request
        text = screen_text(app)
        assert f"{request.before[:7]} → " in text
        shown = text.split(f"{request.before[:7]} → ", 1)[1][:7]
        assert shown != request.after[:7]  # not the agent's commit, which no history holds once decided
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    [decision] = decisions(opened)
    pool = Pool(opened.run.memory)
    assert decision["after"].startswith(shown) and pool.head() == decision["after"]
    assert shown in pool.git("log", "--format=%h", "--abbrev=7").split()


async def test_the_rollback_dialog_names_the_commit_kept_aside(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        request = (await wait_for_review(pilot, app)).request
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        said = screen_text(app)
        assert "the commit " in said and request.after[:7] not in said
        named = said.split("the commit ", 1)[1][:7]
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.training)
    [decision] = decisions(opened)
    pool = Pool(opened.run.memory)
    kept = pool.git("rev-parse", decision["ref"])
    assert kept.startswith(named)  # what refs/skilltui keeps is the commit the dialog named
