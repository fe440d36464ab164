"""The pool's commits, each joined to the micro-step that made it and what the loss did next.

`git log` says what changed; the run's records say why. A commit made by a backward
micro-step is found through the store's one reader of micro-steps (`store.micro_steps`):
each checked attempt is keyed by the commit it checked, or, once decided, by the one with
its provenance trailers, and gets
that micro-step's label, works, decision, reviewer and the loss of the
step whose reports it acted on. A revert made by `skilltui review` is found through its
`history` event. Commits that a rerun, a roll back or a reset dropped are still kept
under `refs/skilltui/...`; they are read too, marked as off the pool's history.

Loss before / after a commit is a step-level figure: the mean loss of the step whose loss
reports the micro-step read, and the mean loss of the next step, which is the first one
written with the notes as that micro-step (and the others of its step) left them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.update.attribution import NoteStats, run_attribution
from ..model import events as ev
from ..model.commits import LABEL, Commit, MicroStepRecord, decision_words, parse_body
from ..model.figures import part_means
from ..model.parse import read_run
from ..model.view import RunView
from ..pool.repo import REVERTS, PoolGit
from ..store.micro_steps import micro_step_records
from ..store.run_folder import Run
from .status import RunStatus, status_of

DROPPED = {
    "reset": "dropped by reset",
    "failed": "failed its checks",
    "dead": "left by a dead attempt",
    "kept": "uncommitted changes kept on reopen",
}


@dataclass
class History:
    """Every commit of the pool, newest first, and the facts about the run the app shows around them."""

    run: Run
    head: str
    commits: list[Commit]
    status: RunStatus
    dirty: bool
    # Per note: forward passes that read it, mean loss of episodes written with / without it.
    attribution: dict[str, NoteStats] = field(default_factory=dict)

    def find(self, sha: str) -> Commit | None:
        return next((c for c in self.commits if c.sha == sha), None)

    @property
    def in_history(self) -> list[Commit]:
        return [c for c in self.commits if c.in_history]


def micro_steps(run: Run, events: list[ev.Event]) -> dict[str, list[MicroStepRecord]]:
    """Every checked backward attempt of the run, keyed by the commit it produced, in the order they ran."""
    found: dict[str, list[MicroStepRecord]] = {}
    for micro in micro_step_records(run, events):
        for attempt in micro.attempts:
            # A decided attempt stands for the commit that carries its trailers (attempt.after); an
            # older run's, or one still awaiting review, for the commit the agent made.
            found.setdefault(attempt.after, []).append(attempt)
    for attempts in found.values():
        # Two candidates can make the very same commit; the one the reviewer kept speaks for it.
        attempts.sort(key=lambda m: (m.epoch, m.step, m.group, m.decision != "dropped", m.attempt))
    return found


def load_history(run: Run) -> History:
    """Read the pool's commits and join them to the run's records. Blocking: git and file reads."""
    pool = run.pool
    record = read_run(run.events_path)
    view = RunView().fold(record.events)
    status = status_of(run, view, record)  # the same read the commits are joined to
    head = pool.head()
    in_history = {c.sha for c in pool.log("HEAD")}
    records = micro_steps(run, record.events)
    reruns = {(m.epoch, m.step, m.group, m.attempt): sha for sha, ms in records.items() for m in ms}
    kept = pool.kept_refs()
    history_actions = {
        e.after: e for e in record.events if isinstance(e, ev.HistoryAction) and e.action == "revert" and e.after
    }
    parts = part_means(view)
    commits: list[Commit] = []
    for commit in pool.log("HEAD", kept=True, files=True):
        sha, message = commit.sha, commit.message
        commit.in_history, commit.kept_as = sha in in_history, kept.get(sha, [])
        attempts = records.get(sha, [])
        micro = attempts[-1] if attempts else None
        commit.earlier = attempts[:-1]
        reverted = REVERTS.search(message)
        if micro is not None:
            commit.micro, commit.mark = micro, micro.mark
            commit.decision = decision_words(micro.decision, micro.by)
            if micro.decision == "rerun":
                commit.rerun_as = reruns.get((micro.epoch, micro.step, micro.group, micro.attempt + 1))
            commit.loss_before, commit.loss_after = status.loss_change((micro.epoch, micro.step))
            if commit.loss_before is not None:
                commit.loss_works = status.covers.get((micro.epoch, micro.step), ())
            commit.prediction = parse_body(message)["prediction"]
            commit.parts_before = parts.get((micro.epoch, micro.step), {})
            later = [k for k in parts if k > (micro.epoch, micro.step)]
            commit.parts_after = parts[min(later)] if later else {}
        elif sha in history_actions:
            commit.decision = f"revert by {history_actions[sha].by}"
        elif reverted:
            commit.decision = "revert"
        elif LABEL.fullmatch(commit.subject.removeprefix("train ")):
            # A backward commit whose checks have not been written yet (or never were: the attempt died).
            commit.decision = "being checked" if status.running else "unchecked"
        elif not commit.parents:
            commit.decision = "start"
        elif commit.subject.startswith("pool: seed"):
            commit.decision = "seed"
        else:
            commit.decision = "made outside training"
        if reverted:
            commit.reverts = reverted.group(1)
        if not commit.in_history and micro is None:
            commit.decision = _why_dropped(commit.kept_as) or commit.decision
        commits.append(commit)
    by_sha = {c.sha: c for c in commits}
    for c in commits:
        if c.reverts and c.in_history:
            target = by_sha.get(c.reverts) or next((t for t in commits if t.sha.startswith(c.reverts)), None)
            if target is not None and target.reverted_by is None:
                target.reverted_by = c.sha
    for c in commits:
        # A revert that was itself reverted put the commit back: it is no longer undone.
        if c.reverted_by and by_sha.get(c.reverted_by) and by_sha[c.reverted_by].reverted_by:
            c.reverted_by = None
    for c in commits:
        if c.reverted_by:  # its decision stands in the records, but the pool no longer holds what it did
            revert = by_sha.get(c.reverted_by)
            who = revert.decision.removeprefix("revert").strip() if revert is not None else ""
            c.decision = " ".join(filter(None, ("reverted", who))) + (f" ({c.decision})" if c.decision else "")
    return History(
        run=run,
        head=head,
        commits=commits,
        status=status,
        dirty=not pool.is_clean(),
        attribution=run_attribution(run, pool.note_paths()),
    )


def _why_dropped(kept_as: list[str]) -> str:
    kinds = {name.split("/", 1)[0] for name in kept_as}
    for kind, words in DROPPED.items():
        if kind in kinds:
            return words
    return ""


def commit_patch(pool: PoolGit, sha: str) -> str:
    """The diff a commit made (the root commit against the empty tree)."""
    return pool.commit_patch(sha)


def range_patch(pool: PoolGit, older: str, newer: str) -> str:
    """The diff from one commit to another: what the pool gained between them."""
    return pool.patch(older, newer)


def search_text(pool: PoolGit, commit: Commit) -> str:
    """What `/` searches in one commit: its message, the notes it touched and their contents at that commit.

    A removed note is read from the commit before, so searching for a removed rule finds
    the commit that removed it.
    """
    parts = [commit.message, *commit.paths]
    for status, path in commit.files:
        rev = commit.parents[0] if status == "D" and commit.parents else commit.sha
        text = pool.blob_text(rev, path)
        if text is not None:
            parts.append(text)
    return "\n".join(parts).casefold()
