"""`skilltui review`: every key of the review app, driven with Pilot on runs the offline engine trained."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltui.apps.history.app import HistoryApp
from skilltui.apps.history.screens.evidence import EvidenceScreen
from skilltui.apps.history.screens.history import HistoryScreen
from skilltui.apps.shared.screens.confirm import ConfirmScreen
from skilltui.apps.shared.screens.diff import DiffScreen
from skilltui.apps.shared.widgets.commit_detail import describe
from skilltui.apps.shared.widgets.commit_list import CommitList, review_text
from skilltui.apps.shared.widgets.run_header import RunHeader
from skilltui.cli import main
from skilltui.pool.notes import render_note
from skilltui.store.run_folder import Run, RunLock
from tests.support.history import SIZE, Scripted, log, screen_of, settle, status, train
from tests.support.recorded import recorded
from tests.support.works import write_work


def train_approved(root: Path) -> None:
    works = [write_work(root / "works", "moth-ferry"), write_work(root / "works", "glass-choir")]
    train(root / "runs", works, Scripted())


@pytest.fixture
def run(made_once, tmp_path: Path) -> Run:
    made_once("history: approved", train_approved)
    return Run(tmp_path / "runs" / "r")


async def test_review_opens_on_the_newest_commit_with_its_records(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        table = screen.query_one(CommitList)
        assert [c.sha for c in table.shown] == log(run)
        assert table.cursor_row == 0 and screen.selected.sha == run.pool.head()
        head = screen.selected
        means = [e["mean_loss"] for e in recorded(run.events_path) if e["kind"] == "step_finished"]
        assert head.micro.label == "epoch 0 step 1 micro 1/1"
        assert head.decision == "approved by human"
        assert (head.loss_before, head.loss_after) == (means[1], None)
        first = table.shown[1]
        # step_finished records its mean to 4 decimals; the credit is the mean over the works
        # both steps scored, unrounded
        assert (first.loss_before, first.loss_after) == pytest.approx((means[0], means[1]), abs=1e-4)
        row = [str(cell) for cell in table.get_row_at(1)]
        assert row[1] == first.short and row[3] == "e0 s0 m1/1" and row[4] == "✓ approved by human"
        assert row[5] == f"{first.loss_before:.3f}→{first.loss_after:.3f}"
        assert row[6] and first.files[0][1].startswith(row[6].removesuffix("…"))  # cut to the column
        assert "finished" in str(screen.query_one(RunHeader).render())


async def test_the_detail_shows_the_prediction_beside_what_happened_and_the_notes_attribution(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        first = screen.query_one(CommitList).shown[1]
        scores = {}
        for e in recorded(run.events_path):
            if e["kind"] == "loss":
                scores.setdefault((e["epoch"], e["step"]), []).append(e["scores"])
        before = sum(s["dialogue"] for s in scores[(0, 0)]) / len(scores[(0, 0)])
        after = sum(s["dialogue"] for s in scores[(0, 1)]) / len(scores[(0, 1)])
        assert first.prediction == "the dialogue part should rise, so the loss of these works should fall."
        assert first.parts_before["dialogue"] == pytest.approx(before, abs=1e-4)
        assert first.parts_after["dialogue"] == pytest.approx(after, abs=1e-4)
        text = describe(first, run.pool.head(), screen.history.attribution).plain
        assert "predicted: the dialogue part should rise" in text
        assert f"dialogue {before:.3f}→{after:.3f} ({after - before:+.3f})" in text
        note = first.files[0][1]
        stats = screen.history.attribution[note]
        assert f"{note}: {stats.passes} reads · " in text and stats.passes >= 1


async def test_j_k_and_the_arrows_move_the_selection(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = screen_of(app).query_one(CommitList)
        await pilot.press("j")
        assert table.cursor_row == 1
        await pilot.press("down")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        await pilot.press("up")
        assert table.cursor_row == 0
        await pilot.press("j")
        assert screen_of(app).selected.sha == log(run)[1]


async def test_enter_shows_the_newest_commits_added_lines_and_esc_goes_back(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        patch = run.pool.git("show", "--format=", "HEAD")
        added = [line for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
        assert added
        shown = "\n".join(str(block.render()) for block in app.screen.view.query(".diff-file"))
        for line in added:
            assert line in shown
        # The title names the micro-step once (its subject already says "epoch 0 step 1 micro 1/1").
        title = app.screen.title_text
        assert title.count("micro 1/1") == 1, title
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        assert app.screen.selected.sha == run.pool.head()


async def test_space_marks_a_commit_d_diffs_the_two_and_n_N_walk_the_files(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    # A short terminal, so the diff does not fit and n has to scroll to the next file.
    async with app.run_test(size=(120, 16)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        assert "mark a commit with space first" in status(app).message
        await pilot.press("space")
        await pilot.press("d")
        assert "select another commit" in status(app).message
        await pilot.press("j", "j", "d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        root, head = log(run)[-1], log(run)[0]
        assert screen.patch == run.pool.patch(root, head)
        files = [f.path for f in screen.files]
        assert files == sorted(run.pool.note_paths()) and len(files) >= 2

        def header() -> str:
            return str(screen.query_one("#diff-position").render())

        assert header().startswith(f"file 1/{len(files)}: {files[0]}")
        await pilot.press("n")
        await pilot.pause()
        assert header().startswith(f"file 2/{len(files)}: {files[1]}")
        second = list(screen.view.query(".diff-file"))[1]
        assert screen.view.scroll_y > 0 and abs(screen.view.scroll_y - second.virtual_region.y) <= 1
        await pilot.press("N")
        assert header().startswith(f"file 1/{len(files)}: {files[0]}")
        await pilot.press("N")
        assert header().startswith(f"file {len(files)}/{len(files)}")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("space")
        assert screen_of(app).marked == root  # the mark moves to the selected commit
        await pilot.press("space")
        assert "unmarked" in status(app).message and screen_of(app).marked is None


async def test_e_shows_the_summary_and_loss_reports_the_micro_step_read(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, EvidenceScreen)
        text = app.screen.markdown
        folder = run.backward_dir(0, 1, 1)
        summary = (folder / "summary.md").read_text(encoding="utf-8")
        weakest = next(line for line in summary.splitlines() if line.startswith("The ") or line.startswith("- "))
        assert weakest in text
        for work in ("moth-ferry", "glass-choir"):
            report = run.loss_report(0, 1, work).read_text(encoding="utf-8")
            assert f"## Loss report: {work}, episodes 3-4 (loss " in text
            assert report.splitlines()[2] in text  # "Loss 0.xxx (lower is better)."
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("end", "e")
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        assert "not made by a micro-step" in status(app).message


@pytest.mark.slow
async def test_slash_searches_messages_and_note_contents(run: Run) -> None:
    pool = run.pool
    head = pool.head()
    note = pool.changes(f"{head}~1", head).added[0]
    body_words = (pool.root / note).read_text(encoding="utf-8").split("## Guidance", 1)[1].split()
    messages = pool.git("log", "--format=%B").casefold()
    word = next(w for w in body_words if len(w) > 5 and w.isalpha() and w.casefold() not in messages)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = screen_of(app).query_one(CommitList)
        await pilot.press("slash")
        await settle(pilot)
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "search commits /" in shown  # the box is labelled
        await pilot.press(*word.upper())
        await pilot.press("enter")
        await settle(pilot)
        assert [c.sha for c in table.shown] == [head]
        assert "is in 1 commit;" in status(app).message
        await pilot.press("escape")
        assert len(table.shown) == len(log(run))
        await pilot.press("slash", *"start empty", "enter")
        await settle(pilot)
        assert [c.subject for c in table.shown] == ["pool: start empty"]
        await pilot.press("escape", "slash", *"zzzqqq", "enter")
        await settle(pilot)
        assert "no commit mentions" in status(app).message and len(table.shown) == len(log(run))
        await pilot.press("escape")  # esc takes the failed search's line away too
        await settle(pilot)
        assert "no commit mentions" not in status(app).message
        # Letters typed into the search box never reach the list's keys (t would revert).
        assert log(run)[0] == head


@pytest.mark.slow
async def test_u_then_y_adds_exactly_one_inverse_commit(run: Run) -> None:
    pool = run.pool
    head, before = pool.head(), log(run)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("escape", "u")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert log(run)[1:] == before
        assert pool.git("rev-parse", "HEAD^{tree}") == pool.git("rev-parse", f"{head}~1^{{tree}}")
        assert pool.is_clean()
        screen = screen_of(app)
        assert screen.selected.sha == pool.head() and screen.selected.decision == "revert by human"
        assert screen.history.find(head).reverted_by == pool.head()
        assert "reverted" in status(app).message
        [event] = [e for e in recorded(run.events_path) if e["kind"] == "history"]
        assert (event["action"], event["target"], event["after"]) == ("revert", head, pool.head())


async def test_a_reverted_commit_reads_reverted_after_a_reload_not_approved(run: Run) -> None:
    head = run.pool.head()
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
    again = HistoryApp(run, poll=None)  # `skilltui review` opened again: only what the run records
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reverted = screen_of(again).history.find(head)
        assert reverted.reverted_by == run.pool.head()
        assert reverted.decision == "reverted by human (approved by human)"
        assert "reverted" in review_text(reverted, wide=False) and "approved" not in review_text(reverted, False)
        assert "reverted by human" in str(describe(reverted, run.pool.head()))


async def test_n_or_esc_cancels_and_changes_nothing(run: Run) -> None:
    before = log(run)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u", "n")
        await settle(pilot)
        assert "cancelled" in status(app).message
        await pilot.press("j", "R", "escape")
        await settle(pilot)
        assert "cancelled" in status(app).message
    assert log(run) == before
    assert not [e for e in recorded(run.events_path) if e["kind"] == "history"]


async def test_u_on_a_conflict_changes_nothing_and_says_why(run: Run) -> None:
    pool = run.pool
    target = pool.head()
    note = pool.changes(f"{target}~1", target).added[0]
    (pool.root / note).write_text(render_note("Changed by hand later.", "Another body."), encoding="utf-8")
    pool.commit_all("hand edit after training")
    before = log(run)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j", "u", "y")
        await settle(pilot)
        message = status(app).message
        assert "revert refused" in message and "conflicts" in message and note in message
        assert "-error" in status(app).classes
    assert log(run) == before and pool.is_clean()


async def test_R_then_y_resets_and_keeps_the_dropped_commits_under_a_ref(run: Run) -> None:
    pool = run.pool
    head = pool.head()
    root = log(run)[-1]
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        assert "already at" in status(app).message
        await pilot.press("end", "R")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "leave the pool's history" in str(app.screen.query_one("#detail").render())
        await pilot.press("y")
        await settle(pilot)
        assert pool.head() == root and pool.is_clean()
        [ref] = pool.git("for-each-ref", "--format=%(refname)", "refs/skilltui/reset").split()
        assert pool.git("rev-parse", ref) == head
        table = screen_of(app).query_one(CommitList)
        assert [c.sha for c in table.shown] == [root]
        # The dropped commits are a key away, marked as dropped, and can be restored.
        await pilot.press("a")
        assert head in [c.sha for c in table.shown]
        table.move_cursor(row=[c.sha for c in table.shown].index(head))
        await pilot.press("u")
        assert "not in the pool's history" in status(app).message
        await pilot.press("R", "y")
        await settle(pilot)
        assert pool.head() == head
    actions = [(e["action"], e["after"]) for e in recorded(run.events_path) if e["kind"] == "history"]
    assert actions == [("reset", root), ("reset", head)]


async def test_u_and_R_are_refused_while_training_holds_the_run(run: Run) -> None:
    before = log(run)
    lock = RunLock(run.root)
    lock.acquire()
    try:
        app = HistoryApp(run, poll=None)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "running" in str(screen_of(app).query_one(RunHeader).render())
            await pilot.press("j", "u")
            await settle(pilot)
            assert not isinstance(app.screen, ConfirmScreen)
            assert "revert refused" in status(app).message and "being trained" in status(app).message
            await pilot.press("R")
            await settle(pilot)
            assert not isinstance(app.screen, ConfirmScreen)
            assert "reset refused" in status(app).message
    finally:
        lock.release()
    assert log(run) == before
    assert not [e for e in recorded(run.events_path) if e["kind"] == "history"]


async def test_training_that_starts_while_the_question_is_open_still_wins(run: Run) -> None:
    before = log(run)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        lock = RunLock(run.root)
        lock.acquire()
        try:
            await pilot.press("y")
            await settle(pilot)
        finally:
            lock.release()
        assert "revert refused" in status(app).message
    assert log(run) == before


def train_reviewed(root: Path) -> None:
    train(root / "runs", [write_work(root / "works", "reed-lamp")], Scripted("rerun", "rollback"))


@pytest.fixture
def reviewed_run(made_once, tmp_path: Path) -> Run:
    made_once("history: rerun and rollback", train_reviewed)
    return Run(tmp_path / "runs" / "r")


async def test_rolled_back_and_rerun_attempts_show_with_their_decision(reviewed_run: Run) -> None:
    run = reviewed_run
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = screen_of(app).query_one(CommitList)
        assert all(c.in_history for c in table.shown)
        await pilot.press("a")
        dropped = [c for c in table.shown if not c.in_history]
        decisions = {c.decision for c in dropped} | {f"rerun by {m.by}" for c in dropped for m in c.earlier}
        assert decisions == {"rerun by human", "rolled back by human"}
        assert all(c.kept_as for c in dropped)
        await pilot.press("a")
        assert all(c.in_history for c in table.shown)


async def test_at_160_columns_the_fixed_columns_show_whole_and_the_subject_takes_the_rest(reviewed_run: Run) -> None:
    app = HistoryApp(reviewed_run, poll=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.press("a")  # the dropped commits too: "↶ rolled back by human", "↻ rerun by human"
        await settle(pilot)
        table = screen_of(app).query_one(CommitList)
        columns = [column.key.value for column in table.columns.values()]
        for row, commit in enumerate(table.shown):
            cells = dict(zip(columns, (str(cell) for cell in table.get_row_at(row)), strict=True))
            whole = {
                "micro-step": commit.micro.short_label if commit.micro else "",
                "decision": review_text(commit, True),
                "loss": commit.outcome,
            }
            assert {name: cells[name] for name in whole} == whole
        assert table.columns["subject"].width >= 40


async def test_the_list_follows_new_commits_while_training_runs(run: Run) -> None:
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        pool = run.pool
        (pool.root / "action").mkdir(exist_ok=True)
        (pool.root / "action" / "late.md").write_text(render_note("Arrived later.", "Body."), encoding="utf-8")
        new = pool.commit_all("a commit made while the app was open")
        screen.check_for_changes()
        await settle(pilot)
        assert screen.selected.sha == new and screen.query_one(CommitList).shown[0].sha == new


def test_review_of_an_unknown_run_says_how_to_list_runs(tmp_path: Path, capsys) -> None:
    assert main(["review", "nope", "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run named nope" in err and "skilltui runs" in err
    # A path is a folder that is not there, not a run id looked up in --runs-dir.
    assert main(["review", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such run folder" in err and "no run named" not in err


async def test_u_on_an_empty_commit_is_refused_before_asking(run: Run) -> None:
    run.pool.commit_all("nothing worth changing")
    before = log(run)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert "changes no note" in status(app).message
        await pilot.press("end", "u")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
    assert log(run) == before


def test_review_outside_a_terminal_says_so(run: Run, capsys) -> None:
    assert main(["review", str(run.root)]) == 2
    assert "terminal app" in capsys.readouterr().err
