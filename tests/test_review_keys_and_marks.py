"""`skilltui review`'s keys that clash with nothing, its help, its layout at 80 columns, and what
each decision led to; and in the live app, the mark on a commit whose review still waits."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from skilltui.apps.history.app import HistoryApp
from skilltui.apps.shared import keymap
from skilltui.apps.shared.screens.confirm import ConfirmScreen
from skilltui.apps.shared.screens.help import HelpScreen
from skilltui.apps.shared.themes import DEFAULT_THEME, LIGHT_THEME
from skilltui.apps.shared.widgets.commit_detail import describe
from skilltui.apps.shared.widgets.commit_list import CommitList
from skilltui.model.commits import PENDING, Commit, Mark, MicroStepRecord
from skilltui.runs import operations
from skilltui.store.run_folder import Run
from tests.support.history import Scripted, log, screen_of, settle, status, train
from tests.support.tui import make_app, wait_for, wait_for_review
from tests.support.widgets import Harness
from tests.support.works import write_work


def train_three_steps(root: Path) -> None:
    works = [write_work(root / "works", name) for name in ("tin-orchard", "salt-bell")]
    train(root / "runs", works, Scripted(), steps=3)


@pytest.fixture
def run(made_once, tmp_path: Path) -> Run:
    made_once("history: three steps", train_three_steps)
    return Run(tmp_path / "runs" / "r")


async def test_g_g_goes_to_the_top_and_G_to_the_bottom_without_asking_anything(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        table = screen_of(app).query_one(CommitList)
        assert len(table.shown) > 2
        await pilot.press("G")
        assert table.cursor_row == len(table.shown) - 1
        await pilot.press("g")
        assert table.cursor_row == len(table.shown) - 1  # one g waits for the second
        await pilot.press("g")
        assert table.cursor_row == 0
        await pilot.press("G", "g", "j", "g")  # a g broken by another key is not g g
        assert table.cursor_row == len(table.shown) - 1
        assert not isinstance(app.screen, ConfirmScreen)


async def test_t_switches_the_theme_as_in_the_live_app_and_changes_no_history(run: Run) -> None:
    before = log(run)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.theme == DEFAULT_THEME
        await pilot.press("t")
        await settle(pilot)
        assert app.theme == LIGHT_THEME and not isinstance(app.screen, ConfirmScreen)
    assert log(run) == before


async def test_question_mark_opens_the_help_with_every_review_key(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = [(str(k.render()), str(w.render())) for k, w in zip(*help_columns(app.screen), strict=True)]
        assert shown == [(row.keys, row.what) for row in keymap.rows("history")]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))


def help_columns(screen: HelpScreen) -> tuple[list, list]:
    return list(screen.query(".key")), list(screen.query(".what"))


async def test_u_on_an_already_reverted_commit_names_the_revert_before_asking(run: Run) -> None:
    target = run.pool.head()
    done = operations.revert(run, target)
    with pytest.raises(operations.Refused, match=f"already reverted by {done.record.after[:7]}"):
        operations.revert(run, target)
    before = log(run)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        table = screen_of(app).query_one(CommitList)
        table.move_cursor(row=[c.sha for c in table.shown].index(target))
        await pilot.press("u")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert f"already reverted by {done.record.after[:7]}" in status(app).message
    assert log(run) == before


async def test_at_80_columns_every_column_fits_on_one_line_without_repeating_the_micro_step(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = screen_of(app).query_one(CommitList)
        names = [str(c.label) for c in table.columns.values()]
        assert {"loss", "notes", "subject", "micro-step"} <= set(names)
        used = sum(c.width + 2 * table.cell_padding for c in table.columns.values())
        assert used <= table.scrollable_content_region.width
        assert all(row.height == 1 for row in table.rows.values())
        subjects = [str(table.get_row_at(i)[names.index("subject")]) for i in range(len(table.shown))]
        assert not any("epoch" in s and "micro" in s for s in subjects)
        long = [s for s, c in zip(subjects, table.shown, strict=True) if len(c.summary) > len(s)]
        assert long and all(s.endswith("…") for s in long)


@pytest.fixture
def reviewed_run(make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    # The rerun remakes the same commit only if git stamps both attempts with the same time;
    # a fixed date keeps a loaded machine from crossing a second between them.
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, "2026-01-01T12:00:00+00:00")
    return train(tmp_path / "runs", [make_work("reed-lamp")], Scripted("rerun", "rollback"))


async def test_a_rolled_back_commit_shows_it_was_undone_not_the_loss_of_a_kept_one(reviewed_run: Run) -> None:
    app = HistoryApp(reviewed_run, poll=None)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        table = screen_of(app).query_one(CommitList)
        loss = [str(c.label) for c in table.columns.values()].index("loss")
        cells = {c.mark.decision: str(table.get_row_at(i)[loss]) for i, c in enumerate(table.shown) if c.mark}
        rolled = next(c for c in table.shown if c.mark and c.mark.decision == "rollback")
        assert cells["rollback"].endswith("undone") and "→" not in cells["rollback"]
        assert "→" in cells["approve"]
        detail = describe(rolled, "").plain
        assert f"rolled back: the pool went back to {rolled.parents[0][:7]}" in detail
        # The offline agent reran to the very same notes; each attempt keeps its own commit, told
        # apart by its provenance trailers (the rerun's says so), with the same tree.
        rerun = next(c for c in table.shown if c.mark and c.mark.decision == "rerun")
        pool = reviewed_run.pool
        assert pool.git("rev-parse", f"{rerun.sha}^{{tree}}") == pool.git("rev-parse", f"{rolled.sha}^{{tree}}")
        assert "Skilltui-Decision: rerun by human" in pool.git("log", "-1", "--format=%B", rerun.sha)


async def test_a_rerun_commit_names_the_commit_its_rerun_made_instead() -> None:
    micro = MicroStepRecord(0, 0, 1, 1, "epoch 0 step 0 micro 1/1", Path("g1"), ["w"], "rerun", "human", "")
    rerun = Commit("a" * 40, "train epoch 0 step 0 micro 1/1\n\n- tighten scene openings", ["b" * 40], micro=micro)
    rerun.mark, rerun.rerun_as, rerun.loss_before = micro.mark, "c" * 40, 0.5
    kept = Commit("c" * 40, "train epoch 0 step 0 micro 1/1", ["b" * 40], mark=Mark("approve", "human"))
    kept.loss_before, kept.loss_after = 0.5, 0.4
    table = CommitList(detailed=True)
    async with Harness(table).run_test(size=(160, 10)) as pilot:
        table.show([kept, rerun])
        await pilot.pause()
        names = [str(c.label) for c in table.columns.values()]
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(2)]
        assert rows[0][names.index("loss")] == "0.500→0.400"
        assert rows[1][names.index("loss")] == f"→ {'c' * 7}"
        assert rows[1][names.index("subject")] == "tighten scene openings"
    assert f"made {'c' * 7} instead" in describe(rerun, "").plain


async def test_a_waiting_review_marks_its_commit_and_its_notes_as_awaiting_review(open_training) -> None:
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=(120, 36)) as pilot:
        request = (await wait_for_review(pilot, app)).request
        main = app.screen_stack[0]
        commits = main.query_one(CommitList)
        # The Commits tab is hidden behind the review: the list is drawn when it is shown.
        await pilot.press("escape", "4")  # look at the main screen's Commits tab: the list fits its width
        await wait_for(pilot, lambda: bool(commits.shown) and commits.shown[0].sha == request.after)
        await wait_for(pilot, lambda: commits.shown[0].mark == PENDING)
        await wait_for(pilot, lambda: "awaiting review" in " ".join(map(str, commits.get_row_at(0))))
        assert str(commits.get_row_at(0)[2]) == "…" and commits.shown[0].sha == request.after
        await pilot.press("v")
        await wait_for_review(pilot, app)
        label = str(main.query_one(TabbedContent).get_tab("pool").label)
        assert f"+ {len(request.added)} awaiting review" in label
        await pilot.press("a")
        await wait_for(pilot, lambda: commits.shown[0].mark is not None and commits.shown[0].mark.decision == "approve")
        assert "awaiting" not in str(main.query_one(TabbedContent).get_tab("pool").label)


def test_review_help_lists_the_keys_the_history_browser_binds(capsys) -> None:
    import pytest

    from skilltui.cli import main

    with pytest.raises(SystemExit):
        main(["review", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for row in keymap.rows("history"):
        assert f"{row.keys} {' '.join(row.what.split())}" in text, row.keys
    assert "t revert" not in text and "g reset" not in text


async def test_the_history_palette_offers_search_revert_reset_and_only_the_own_themes(run: Run) -> None:
    from skilltui.apps.shared.palette import OwnThemes

    app = HistoryApp(run, poll=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Search commits", "Revert the selected commit", "Reset the pool to the selected commit"):
            assert wanted in titles
        assert "Switch theme" in titles and not {"Theme", "Keys", "Screenshot"} & set(titles)
        revert = next(c for c in app.get_system_commands(app.screen) if c.title == "Revert the selected commit")
        revert.callback()  # the same as u: it asks first
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        offered = [hit.text async for hit in OwnThemes(app.screen).discover()]
        assert DEFAULT_THEME in offered and LIGHT_THEME in offered and "textual-dark" not in offered


def test_a_kept_training_commit_whose_step_has_not_finished_reads_an_ellipsis() -> None:
    micro = MicroStepRecord(0, 1, 1, 1, "epoch 0 step 1 micro 1/1", Path("g1"), ["w"], "approve", "human", "")
    kept = Commit("c" * 40, "train epoch 0 step 1 micro 1/1", ["b" * 40], mark=Mark("approve", "human"), micro=micro)
    assert kept.outcome == "…"  # what docs/history.md's loss column documents, not an empty cell
    hand = Commit("d" * 40, "a hand edit", ["c" * 40])
    assert hand.outcome == ""
