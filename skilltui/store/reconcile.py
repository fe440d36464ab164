"""Reopening a run: make the pool and the run's records agree before training goes on.

Between two sessions a pool can change in ways training did not make: a person edits or
adds a note and leaves it uncommitted, commits by hand, or resets and reverts with
`skilltui review`; a killed git leaves a lock file; a killed agent leaves half an edit.
What resume does with each (docs/run-folder.md, "Resuming a pool that changed"):

- a stale git lock file is removed: the run lock is held, so no git of ours is running;
- uncommitted changes (edits, new files, ignored files too) are kept as a commit under
  `refs/skilltui/kept/<time>` and the pool goes back to its HEAD, with a one-line notice:
  training only ever builds on commits, and nothing is deleted without a named ref;
- a commit made outside training (by hand, or a `review` reset or revert) is respected:
  training goes on from it. If a micro-step was unfinished, it now starts from the new
  HEAD instead of undoing the change; a notice says so;
- a commit of a micro-step's own attempt (the process died between commit and record)
  is left to the backward stage, which keeps it under `refs/skilltui/dead/...` and runs
  the attempt again, or asks for its review again when it had passed its checks; a hand
  commit that only looks like one (its subject) is a change from outside;
- a git repository inside the pool, or a file name that is not UTF-8, is refused with one
  line before anything moves (`check_pool_files`).

A pool whose HEAD or objects cannot be read never gets here: opening the run stops with
one line naming the damage (`skilltui.pool.damage`), and `skilltui repair` is the way on.

Every notice becomes a `warning` event, and a moved HEAD a `pool_changed` event, so the
records say what the pool is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core.durable import write_atomic
from ..core.errors import UsageError
from ..model import events as ev
from ..pool.notes import Pool
from ..pool.repo import readable
from .run_folder import DECISION, OUTCOME, Run, read_json

LOCK_FILES = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "config.lock", "packed-refs.lock")


@dataclass
class Reconciled:
    """What reopening found: notices for the user and the records, and the pool's HEAD if it moved."""

    notices: list[str] = field(default_factory=list)
    moved_to: str | None = None


def clear_stale_locks(pool: Pool) -> list[str]:
    """Remove lock files a killed git left behind. Only call while holding the run's lock.

    Every git process that works on a run's pool runs under the run lock (training, or
    `skilltui review`'s revert and reset), so a lock file the lock's holder finds belongs
    to a process that is gone.
    """
    git_dir = pool.root / ".git"
    candidates = [git_dir / name for name in LOCK_FILES]
    if (git_dir / "refs").is_dir():
        candidates += sorted((git_dir / "refs").rglob("*.lock"))
    stale: list[str] = []
    for path in candidates:
        if path.is_file():
            path.unlink()
            stale.append(str(path.relative_to(pool.root)))
    return stale


def configure(pool: Pool) -> None:
    """Settings every pool needs, applied on reopen to pools older versions made too.

    A user's global ignore file must not hide a note from the checks.
    """
    if pool.git("config", "--default", "", "--get", "core.excludesFile") != os.devnull:
        pool.git("config", "core.excludesFile", os.devnull)


def kept_notice(pool: Pool, kept: tuple[str, list[str]], head: str, when: str = "") -> str:
    """The one line for edits no commit held, kept under a ref before the pool went back to `head`:
    the same words whether they were found between sessions or while training ran."""
    ref, paths = kept
    return (
        f"the pool had changes no commit holds{when} ({_few(paths)}); kept them as {ref} and put the pool back "
        f"at {head[:7]}; commit them in {pool.root} (while no run trains) to train with them"
    )


def check_pool_files(pool: Pool) -> None:
    """UsageError for what a pool cannot hold and training cannot carry, found before anything moves.

    A git repository inside the pool (one made there, or a submodule) would be kept as a bare
    link and never cleaned away, so every micro-step would find the pool dirty; a file name
    that is not UTF-8 cannot be written into a record. Both are the user's to move or rename.
    """
    for dirpath, dirnames, filenames in os.walk(pool.root):
        rel_dir = os.path.relpath(dirpath, pool.root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != ".git"]
        elif ".git" in dirnames or ".git" in filenames:
            raise UsageError(
                f"the pool holds a git repository of its own at {readable(rel_dir)} (a nested repository or a "
                f"submodule); move it out of {pool.root} and run the same command again"
            )
        for name in dirnames + filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if readable(rel) != rel:
                raise UsageError(
                    f"the pool has a file whose name is not UTF-8 text ({readable(rel)}); rename it in "
                    f"{pool.root} (git mv, then commit) and run the same command again"
                )


def reconcile(run: Run, events: list[ev.Event]) -> Reconciled:
    """Repair and adopt, as the module docstring says; `events` are the run's records. Call with the run lock held."""
    pool = run.pool
    found = Reconciled()
    check_pool_files(pool)
    stale = clear_stale_locks(pool)
    if stale:
        found.notices.append(f"removed {', '.join(stale)} that a killed git left in the pool")
    configure(pool)
    head, clean = pool.state()
    if not clean:
        kept = pool.reset(head)
        if kept:
            found.notices.append(kept_notice(pool, kept, head))
    rebased = False
    for out in unfinished_micro_steps(run):
        before = (out / "before.txt").read_text(encoding="utf-8").strip()
        if before == head or head in _decided_heads(out) or _own_attempt(pool, before, head, _subject_prefix(run, out)):
            continue
        write_atomic(out / "before.txt", head + "\n")
        rebased = True
        found.notices.append(
            f"{_where(run, out)}: the pool moved from {before[:7]} to {head[:7]} outside training while this "
            f"micro-step was unfinished; it now starts from {head[:7]} and leaves that change in place"
        )
    recorded = _recorded_head(events)
    if recorded and recorded != head:
        # Only an unfinished micro-step's own subject counts as training's: a hand commit whose
        # subject merely looks like one ("train epoch 0 step 1 ...") is a change from outside.
        prefixes = tuple(_subject_prefix(run, out) for out in unfinished_micro_steps(run))
        decided = {h for out in unfinished_micro_steps(run) for h in _decided_heads(out)}
        own = head in decided or (bool(prefixes) and _own_attempt(pool, recorded, head, prefixes))
        if not own:
            found.moved_to = head
            if not rebased:
                found.notices.append(
                    f"the pool moved from {recorded[:7]} to {head[:7]} outside training "
                    f"({_subjects(pool, recorded, head)}); training goes on from {head[:7]}"
                )
    return found


def unfinished_micro_steps(run: Run) -> list[Path]:
    """Backward folders that fixed their base commit but never wrote commit.txt."""
    return [
        p.parent
        for p in sorted(run.root.glob("epoch*/step*/backward/g*/before.txt"))
        if not (p.parent / OUTCOME).exists()
    ]


def _subject_prefix(run: Run, out: Path) -> str:
    """How the subject of this micro-step's own attempts begins (backward_prompt.py, consolidation.py)."""
    step_dir = out.parent.parent
    epoch = step_dir.parent.name[5:]
    if out.name == "g0":  # the epoch's consolidation (consolidation.GROUP), labelled by its epoch alone
        return f"train epoch {epoch} consolidation"
    return f"train epoch {epoch} step {step_dir.name[4:]} micro {out.name[1:]}/"


def _decided_heads(out: Path) -> set[str]:
    """The HEAD a decision recorded in `out` and not yet carried out leaves: training's own (decided.py)."""
    path = out / DECISION
    try:
        return {str(read_json(path)["head"])} if path.exists() else set()
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def _where(run: Run, out: Path) -> str:
    return str(out.relative_to(run.root))


def _own_attempt(pool: Pool, base: str, head: str, prefix: str | tuple[str, ...]) -> bool:
    """True when every commit from `base` to `head` is a training attempt's (subject starts with `prefix`)."""
    if not pool.is_ancestor(base, head):
        return False
    subjects = [c.subject for c in pool.log(f"{base}..{head}")]
    return bool(subjects) and all(s.startswith(prefix) for s in subjects)


def _recorded_head(events: list[ev.Event]) -> str | None:
    """The pool's HEAD as the run's events last recorded it (a commit, a reset, a revert)."""
    head = None
    for event in events:
        if isinstance(event, ev.PoolChanged):
            head = event.head or head
        elif isinstance(event, ev.HistoryAction):
            head = event.after or head
    return head


def _subjects(pool: Pool, base: str, head: str) -> str:
    if not pool.is_ancestor(base, head):
        return f"{base[:7]} is no longer in its history: a reset"
    subjects = [c.subject for c in pool.log(f"{base}..{head}")]
    return "commits: " + _few([f"'{s}'" for s in subjects])


def _few(items: list[str]) -> str:
    shown = ", ".join(items[:3])
    return shown + (f" and {len(items) - 3} more" if len(items) > 3 else "")
