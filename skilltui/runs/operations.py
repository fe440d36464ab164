"""Changing what training did, after the fact: revert one commit, reset the pool to one, or
commit a person's hand edit of a note.

All three change the pool's history, so all keep the engine's promises:

- nothing is lost: a reset keeps the dropped head under `refs/skilltui/reset/<stamp>`, and
  a revert adds an inverse commit rather than rewriting anything;
- the pool stays valid: an inverse commit or an edited note must pass the linter, or nothing changes;
- a conflict changes nothing: the revert is aborted and the pool is as it was;
- every change is on record: a `history` event in the run's events.jsonl, and on each commit
  it undoes or drops a git note (`refs/notes/skilltui`) saying so, the commit itself unchanged;
- nobody changes a pool under a training process: while one holds the run's lock, both are
  refused, and while one runs here the lock is held, so training cannot start mid-change.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import git

from ..core.durable import write_atomic
from ..core.errors import UsageError
from ..engine.update.provenance import note_later
from ..model.bus import JsonlSink
from ..model.events import HistoryAction
from ..model.parse import read_run
from ..pool.notes import Pool, lint_note
from ..store.micro_steps import commit_trailers
from ..store.run_folder import Run, RunLock, is_locked


class Refused(Exception):
    """The operation did not happen; the message says why and the pool is exactly as it was."""


@dataclass(frozen=True)
class Done:
    """What an operation did, as the `history` event it recorded (the pool's head before and
    after, the ref that keeps what was dropped), and the line that tells a person."""

    record: HistoryAction
    message: str


def training_refusal(run: Run) -> str | None:
    """Why history may not change right now, or None when it may."""
    if is_locked(run.root):
        return (
            f"run {run.id} is being trained by another process; history can change only when it stops (reading is fine)"
        )
    return None


@contextmanager
def _hold(run: Run) -> Iterator[Pool]:
    """Hold the run's lock for the length of one change, so training cannot start under it."""
    refusal = training_refusal(run)
    if refusal:
        raise Refused(refusal)
    lock = RunLock(run.root)
    try:
        lock.acquire()
    except UsageError:
        raise Refused(training_refusal(run) or f"run {run.id} is locked by another process") from None
    try:
        pool = run.pool
        if not pool.is_clean():
            raise Refused(
                f"the pool of run {run.id} has uncommitted changes; commit or discard them in {pool.root} first"
            )
        yield pool
    finally:
        lock.release()


def _record(run: Run, record: HistoryAction, message: str) -> Done:
    sink = JsonlSink(run.events_path)
    try:
        sink(record)
    finally:
        sink.close()
    return Done(record, message)


def _resolve(pool: Pool, rev: str) -> str:
    sha = pool.resolve(rev)
    if sha is None:
        raise Refused(f"{rev} is not a commit of this pool")
    return sha


def revert_refusal(pool: Pool, sha: str) -> str | None:
    """Why `sha` cannot be reverted, asked before anyone is asked to confirm; None when it can be."""
    short = sha[:7]
    if not pool.is_ancestor(sha, pool.head()):
        return f"{short} is not in the pool's history (it was dropped); there is nothing to revert"
    parents = pool.parents(sha)
    if not parents:
        return f"{short} is the pool's first commit; reset (R) to a commit instead"
    if len(parents) > 1:
        return f"{short} is a merge; revert the commit that made the change instead"
    if not pool.files(sha):
        return f"{short} changes no note (an empty micro-step); there is nothing to revert"
    by = pool.reverted_by(sha)
    if by is not None:
        return f"{short} is already reverted by {by[:7]}; nothing to revert"
    return None


def revert(run: Run, rev: str) -> Done:
    """Add one commit that undoes `rev`. Refused (pool untouched) on a conflict or a linter failure."""
    with _hold(run) as pool:
        sha = _resolve(pool, rev)
        short = sha[:7]
        head = pool.head()
        refusal = revert_refusal(pool, sha)
        if refusal:
            unfinished = _unfinished_revert(run, pool, sha)
            if unfinished is None:
                raise Refused(refusal)
            return _finish_revert(run, pool, sha, unfinished)
        try:
            pool.git("revert", "--no-edit", sha)
        except git.GitCommandError:
            conflicted = sorted(str(path) for path in pool.repo.index.unmerged_blobs())
            try:
                pool.git("revert", "--abort")
            except git.GitCommandError:
                pass
            pool.reset(head)
            where = ", ".join(map(str, conflicted)) or "the notes it touched"
            raise Refused(
                f"reverting {short} conflicts with later commits ({where} changed since); nothing changed. "
                "Revert the later commits first, or reset (R) to a commit before it"
            ) from None
        return _finish_revert(run, pool, sha, head)


def revert_unfinished(run: Run, sha: str) -> bool:
    """True when a revert of `sha` was stopped after its inverse commit: asking for it again finishes it."""
    return _unfinished_revert(run, run.pool, sha) is not None


def _unfinished_revert(run: Run, pool: Pool, sha: str) -> str | None:
    """The head a revert of `sha` started from, when a kill stopped it after its inverse commit; else None.

    The inverse commit is the pool's head and no `history` event records it: the revert was
    not finished (its lint, note and record come after the commit), so asking for it again
    finishes it instead of answering "already reverted".
    """
    by = pool.reverted_by(sha)
    if by is None or by != pool.head() or len(pool.parents(by)) != 1:
        return None
    recorded = read_run(run.events_path).events if run.events_path.exists() else []
    if any(isinstance(e, HistoryAction) and e.action == "revert" and e.after == by for e in recorded):
        return None
    return pool.parents(by)[0]


def _finish_revert(run: Run, pool: Pool, sha: str, head: str) -> Done:
    """After the inverse commit: lint it, note it on the reverted commit, record it. Safe to run again."""
    short, after = sha[:7], pool.head()
    problems = pool.lint(pool.changes(head, after).touched)
    if problems:
        pool.reset(head)
        raise Refused(f"the inverse of {short} fails the linter ({problems[0]}); nothing changed")
    record = HistoryAction(action="revert", target=sha, before=head, after=after)
    # The reverted commit stays as it was; the decision made later goes beside it as a git note
    # (once: a revert finished again after a kill finds its note there).
    said = f"reverted by {after[:7]}"
    if not any(said in decided for decided in commit_trailers(run, sha).all("Decision")):
        note_later(pool, sha, [("Decision", f"rolled back later by {record.by} ({said})")])
    return _record(run, record, f"reverted {short} with {after[:7]}: {pool.subject(after)}")


def reset(run: Run, rev: str) -> Done:
    """Move the pool to `rev`, keeping the dropped head reachable under refs/skilltui/reset/<stamp>."""
    with _hold(run) as pool:
        sha = _resolve(pool, rev)
        head = pool.head()
        if sha == head:
            raise Refused(f"the pool is already at {sha[:7]}; nothing to reset")
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        ref = pool.keep(f"reset/{stamp}", head)
        dropped = [c.sha for c in pool.log(f"{sha}..{head}")]
        pool.reset(sha)
        for gone in dropped:
            note_later(pool, gone, [("Decision", f"dropped later by human (the pool was reset to {sha[:7]})")])
        message = f"reset the pool to {sha[:7]}; the old head {head[:7]} is kept as {ref}"
        return _record(run, HistoryAction(action="reset", target=sha, before=head, after=sha, ref=ref), message)


def edit(run: Run, note: str, text: str) -> Done:
    """Commit `text` as the new content of `note` (a hand edit), if it changed and passes the linter.

    The person edits a copy (see `components.editor`), so the pool itself only ever holds
    a note that was checked: a failing edit is refused and the pool is as it was.
    """
    with _hold(run) as pool:
        if note not in pool.note_paths():
            raise Refused(f"{note} is not a note of the pool at HEAD; there is nothing to edit")
        path = pool.root / note
        if path.read_text(encoding="utf-8") == text:
            raise Refused(f"{note} is unchanged; nothing to commit")
        head = pool.head()
        problems = lint_note(note, text)
        if problems:
            raise Refused(f"the edit fails the linter ({problems[0]}); nothing changed, your text was not kept")
        write_atomic(path, text)
        after = pool.commit_all(f"hand edit: {note}")
        record = HistoryAction(action="edit", target=note, before=head, after=after)
        return _record(run, record, f"committed your edit of {note} as {after[:7]}")
