"""Revert and reset on a trained pool: one inverse commit, nothing lost, refused while training, on record."""

from __future__ import annotations

import pytest

from skilltui.pool.notes import render_note
from skilltui.runs import operations
from skilltui.runs.records import load_history
from skilltui.store.run_folder import Run, RunLock
from tests.support.recorded import recorded


@pytest.fixture
def run(copied_run) -> Run:
    return copied_run("lantern-fen", "cold-orchard")


def tree(run: Run, rev: str) -> str:
    return run.pool.git("rev-parse", f"{rev}^{{tree}}")


def count(run: Run) -> int:
    return int(run.pool.git("rev-list", "--count", "HEAD"))


def history_events(run: Run) -> list[dict]:
    return [e for e in recorded(run.events_path) if e["kind"] == "history"]


def test_revert_adds_one_inverse_commit_that_passes_the_linter(run: Run) -> None:
    pool = run.pool
    head, n = pool.head(), count(run)
    done = operations.revert(run, head)
    assert count(run) == n + 1
    assert pool.git("rev-parse", "HEAD~1") == head
    assert tree(run, "HEAD") == tree(run, f"{head}~1")
    assert pool.is_clean() and pool.lint() == []
    assert history_events(run)[-1] | {"time": None} == {
        "kind": "history",
        "time": None,
        "action": "revert",
        "target": head,
        "before": head,
        "after": pool.head(),
        "ref": None,
        "by": "human",
    }
    assert history_events(run)[-1] == done.record.to_dict()  # what it says it did is what it recorded


def test_revert_of_an_older_commit_undoes_only_that_commit(run: Run) -> None:
    pool = run.pool
    older = pool.git("rev-parse", "HEAD~1")
    removed = pool.changes(f"{older}~1", older).added
    kept_at_head = set(pool.note_paths()) - set(removed)
    operations.revert(run, older)
    assert set(pool.note_paths()) == kept_at_head


def test_revert_that_conflicts_changes_nothing_and_says_which_note(run: Run) -> None:
    pool = run.pool
    target = pool.git("rev-parse", "HEAD")
    note = pool.changes(f"{target}~1", target).added[0]
    (pool.root / note).write_text(render_note("Rewritten by hand after training.", "A new body."), encoding="utf-8")
    pool.commit_all("hand edit")
    head, n, events = pool.head(), count(run), len(recorded(run.events_path))
    with pytest.raises(operations.Refused, match=f"conflicts.*{note}.*nothing changed"):
        operations.revert(run, target)
    assert pool.head() == head and count(run) == n and pool.is_clean()
    assert not (pool.root / ".git" / "REVERT_HEAD").exists()
    assert len(recorded(run.events_path)) == events


def test_revert_whose_inverse_fails_the_linter_is_undone(run: Run) -> None:
    pool = run.pool
    (pool.root / "dialogue").mkdir(exist_ok=True)
    (pool.root / "dialogue" / "rough.md").write_text("no front matter yet\n", encoding="utf-8")
    pool.commit_all("a rough note made by hand")
    (pool.root / "dialogue" / "rough.md").write_text(render_note("Now a proper note.", "Body."), encoding="utf-8")
    pool.commit_all("fix the rough note")
    head = pool.head()
    with pytest.raises(operations.Refused, match="fails the linter.*nothing changed"):
        operations.revert(run, head)
    assert pool.head() == head and pool.is_clean()


@pytest.mark.parametrize("which", ["root", "empty", "dropped"])
def test_revert_refuses_what_there_is_nothing_to_revert(run: Run, which: str) -> None:
    pool = run.pool
    if which == "root":
        rev = pool.git("rev-list", "--max-parents=0", "HEAD")
    elif which == "empty":
        rev = pool.commit_all("nothing worth changing")
    else:
        rev = pool.head()
        operations.reset(run, "HEAD~1")
    head = pool.head()
    with pytest.raises(operations.Refused):
        operations.revert(run, rev)
    assert pool.head() == head


def test_reset_keeps_the_dropped_head_under_a_named_ref(run: Run) -> None:
    pool = run.pool
    head = pool.head()
    target = pool.git("rev-parse", "HEAD~2")
    done = operations.reset(run, target)
    assert pool.head() == target and pool.is_clean()
    ref = done.record.ref
    assert ref and ref.startswith("refs/skilltui/reset/")
    assert pool.git("rev-parse", ref) == head
    event = history_events(run)[-1]
    assert event == done.record.to_dict()
    assert (event["action"], event["target"], event["before"], event["after"], event["ref"]) == (
        "reset",
        target,
        head,
        target,
        ref,
    )
    # The dropped commits are still read, marked as off the pool's history.
    history = load_history(run)
    assert not history.find(head).in_history


def test_reset_to_the_head_is_refused(run: Run) -> None:
    with pytest.raises(operations.Refused, match="already at"):
        operations.reset(run, "HEAD")


@pytest.mark.parametrize("action", [operations.revert, operations.reset])
def test_history_cannot_change_while_training_holds_the_run(run: Run, action) -> None:
    pool = run.pool
    head, events = pool.head(), len(recorded(run.events_path))
    lock = RunLock(run.root)
    lock.acquire()
    try:
        with pytest.raises(operations.Refused, match="being trained by another process"):
            action(run, "HEAD~1")
    finally:
        lock.release()
    assert pool.head() == head and len(recorded(run.events_path)) == events


def test_history_cannot_change_under_uncommitted_edits(run: Run) -> None:
    pool = run.pool
    note = pool.note_paths()[0]
    (pool.root / note).write_text("edited by hand\n", encoding="utf-8")
    with pytest.raises(operations.Refused, match="uncommitted changes"):
        operations.reset(run, "HEAD~1")
    assert (pool.root / note).read_text(encoding="utf-8") == "edited by hand\n"


def test_an_operation_holds_the_lock_so_training_cannot_start_under_it(run: Run, monkeypatch) -> None:
    seen = []
    real_reset = run.pool.__class__.reset

    def spy(self, rev):
        seen.append(operations.training_refusal(run) is not None)
        return real_reset(self, rev)

    monkeypatch.setattr(run.pool.__class__, "reset", spy)
    operations.reset(run, "HEAD~1")
    assert seen == [True]
    assert operations.training_refusal(run) is None


def test_a_commit_awaiting_its_checks_is_not_called_a_hand_edit(run: Run) -> None:
    pool = run.pool
    (pool.root / "action").mkdir(exist_ok=True)
    (pool.root / "action" / "fresh.md").write_text(render_note("Fresh.", "Body."), encoding="utf-8")
    sha = pool.commit_all("train epoch 0 step 2 micro 1/1")
    assert load_history(run).find(sha).decision == "unchecked"
    lock = RunLock(run.root)
    lock.acquire()
    try:
        assert load_history(run).find(sha).decision == "being checked"
    finally:
        lock.release()
    other = pool.commit_all("tidy by hand")
    assert load_history(run).find(other).decision == "made outside training"


@pytest.mark.subprocess
def test_the_history_core_imports_no_textual() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import skilltui.runs.records, skilltui.runs.operations, skilltui.runs.export, "
        "skilltui.runs.overview, skilltui.apps.history.evidence, skilltui.commands.history; "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_hand_edit_is_linted_and_refused_whole_when_it_fails(run) -> None:
    pool = run.pool
    note = pool.note_paths()[0]
    head = pool.head()
    with pytest.raises(operations.Refused, match="fails the linter"):
        operations.edit(run, note, "no front matter at all\n")
    assert pool.head() == head and pool.is_clean()
    with pytest.raises(operations.Refused, match="not a note"):
        operations.edit(run, "scene/nope.md", "x")
    text = (pool.root / note).read_text(encoding="utf-8") + "One more line of craft.\n"
    done = operations.edit(run, note, text)
    assert pool.head() == done.record.after != head and pool.subject(done.record.after) == f"hand edit: {note}"


class Killed(BaseException):
    """The process dying at that point: nothing after it runs (a BaseException, so no handler takes it)."""


@pytest.mark.parametrize("point", ["note_later", "_record"])
def test_a_revert_killed_midway_is_completed_by_its_retry(run: Run, monkeypatch, point: str) -> None:
    pool = run.pool
    head, n = pool.head(), count(run)

    def killed(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(operations, point, killed)
    with pytest.raises(Killed):
        operations.revert(run, head)
    monkeypatch.undo()
    assert count(run) == n + 1  # the inverse commit landed, nothing after it
    done = operations.revert(run, head)
    assert count(run) == n + 1 and tree(run, "HEAD") == tree(run, f"{head}~1")
    reverts = [e for e in history_events(run) if e["action"] == "revert"]
    assert [(e["target"], e["before"], e["after"]) for e in reverts] == [(head, head, pool.head())]
    assert done.record.to_dict() == reverts[0]
    assert pool.notes_of(head, "refs/notes/skilltui").count("reverted by") == 1
    with pytest.raises(operations.Refused, match="already reverted"):
        operations.revert(run, head)
    assert not operations.revert_unfinished(run, head)  # the browser refuses it before asking again


def test_the_browser_offers_to_finish_a_revert_a_kill_stopped(run: Run, monkeypatch) -> None:
    head = run.pool.head()
    monkeypatch.setattr(operations, "note_later", lambda *args: (_ for _ in ()).throw(Killed()))
    with pytest.raises(Killed):
        operations.revert(run, head)
    assert operations.revert_unfinished(run, head)
