"""Several candidates per micro-step (`--candidates K`): their working copies, refs and ranking.

K backward attempts start from the same parent and must not see each other's edits, but
the pool has one working tree. So each candidate edits its own working copy of the pool:
a `git worktree` of the pool repository inside the attempt's folder (`attempt<N>/pool/`),
checked out at the parent, detached. It shares the pool's objects and refs, so its commit
is kept under `refs/skilltui/candidates/<epoch>-<step>-<group>/<k>` the moment it passes
its checks, and the copy is removed once the round is over. A rerun's new round reuses
those names; the round it replaces stays kept under `refs/skilltui/rerun/...`. The pool's own working tree
stays at the parent the whole time, which is what validation and a resumed run expect.
A round a kill cut short is finished on resume, not paid for again: each candidate whose
calls were over (its `reads.json` is written then) is checked where its copy stands
(`recheck_copy`), and only a candidate killed inside its calls runs again.

`rank` orders the checked candidates for the reviewer: those the gate advises keeping
first, lowest validation delta first. It reads a verdict only through `delta_of`, so a
verdict that carries its own mean paired delta plugs in there.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ...model.at import At
from ...model.review import GateVerdict
from ...pool.notes import Pool
from ...store.micro_records import Checked, attempt_ended, write_checked
from ...store.run_folder import read_json, write_atomic, write_json
from ..notes.leakage import Lexicon
from .backward_attempt import Candidate, check_commit


def candidate_ref(at: At, number: int) -> str:
    """Where candidate `number` of micro-step `at` stays reachable (under refs/skilltui/)."""
    return f"candidates/{at.epoch}-{at.step}-{at.group}/{number}"


def open_copy(pool: Pool, folder: Path, before: str) -> Pool:
    """A fresh working copy of the pool at `before` in `folder` (a leftover of a dead attempt is replaced)."""
    close_copy(pool, folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    pool.git("worktree", "add", "-q", "--detach", str(folder), before)
    return Pool(folder)


def close_copy(pool: Pool, folder: Path) -> None:
    """Remove a candidate's working copy; its commit stays in the pool under its ref.

    A copy is a `git worktree`: its `.git` is a file naming the pool, its objects are the
    pool's. A folder whose `.git` is a repository of its own (the pool itself) is never removed.
    """
    if (folder / ".git").is_dir() or folder.resolve() == pool.root.resolve():
        raise ValueError(f"{folder} is a repository, not a candidate's working copy; not removed")
    if folder.exists():
        shutil.rmtree(folder)
    _unlock(pool, folder)
    pool.git("worktree", "prune")


def _unlock(pool: Pool, folder: Path) -> None:
    """Drop git's record of the working copy at `folder` if a kill left it locked.

    `git worktree add` locks its new entry ("initializing") until it is done; killed before
    that, the entry stays locked, `worktree prune` leaves it, and `git fsck` fails on it.
    The run lock is held, so no git of ours is adding it now.
    """
    admin = Path(pool.git("rev-parse", "--absolute-git-dir")) / "worktrees"
    if not admin.is_dir():
        return
    target = folder.resolve()
    for entry in admin.iterdir():
        gitdir = entry / "gitdir"  # names the copy's own git file, inside `folder`
        try:
            points = Path(gitdir.read_text(encoding="utf-8").strip()).parent.resolve() == target
        except OSError:
            points = not (entry / "HEAD").exists()  # killed before git wrote it: nothing of use is in it
        if points and (entry / "locked").exists():
            shutil.rmtree(entry)


def recheck_copy(pool: Pool, adir: Path, before: str, lexicon: Lexicon | None, kept: Candidate, failed: str) -> bool:
    """Finish the checks of a candidate a kill stopped once its calls were over; True when its record stands.

    Its calls were paid (`reads.json` is written when they end) and its commit stands in its
    working copy: the checks read only that copy, so running them again writes the record the
    candidate would have written (`checked.json` and its ref, or `failed.json`), and the round
    goes on to the gate and the review instead of being paid for again; a commit that fails
    them is kept under `failed` (a ref name under refs/skilltui/), as a failed attempt's is.
    False: the candidate was cut short inside its calls, and only it runs again.
    """
    folder = adir / "pool"
    if attempt_ended(adir):  # a review record too means decided, which finish_round never rechecks
        if (folder / ".git").is_file():  # its commit is under its ref already: nothing to keep under dead/
            close_copy(pool, folder)
        return True
    if not (adir / "reads.json").exists() or not (folder / ".git").is_file():
        return False
    copy = Pool(folder)
    try:
        head = copy.head()
        made = copy.commits_between(before, head) if head != before else []
        problem, checked, patch = check_commit(copy, before, made[0][1] if made else "", lexicon)
        if checked is None:
            if head != before:
                pool.keep(failed, head)
            write_json(adir / "failed.json", {"reason": problem, "round": kept.round})
        else:
            write_atomic(adir / "patch.diff", patch)
            pool.keep(kept.ref, checked.after)
            reads = tuple(read_json(adir / "reads.json"))
            ref = f"refs/skilltui/{kept.ref}"
            checked = replace(checked, candidate=kept.number, round=kept.round, reads=reads, ref=ref)
            write_checked(adir, checked.record())
    finally:
        copy.close()
    close_copy(pool, folder)  # its commit is under its ref now: nothing for sweep_copies to keep under dead/
    return True


def sweep_copies(pool: Pool, out: Path, before: str, where: str) -> None:
    """Remove the working copies a dead round left in `out`; a commit one made stays under dead/<where>-a<N>."""
    for folder in sorted(out.glob("attempt*/pool")):  # none, unless a round died: no git call then
        if (folder / ".git").is_file():
            copy = Pool(folder)
            head = copy.head()
            copy.close()
            if head != before:
                pool.keep(f"dead/{where}-a{folder.parent.name.removeprefix('attempt')}", head)
        close_copy(pool, folder)


def delta_of(verdict: GateVerdict | None) -> float | None:
    """The change in validation loss a verdict measured (negative is better), or None when it has none."""
    if verdict is None:
        return None
    mean = verdict.delta  # the interval verdict's paired mean delta, when it measured one
    if mean is not None:
        return float(mean)
    if verdict.before is None or verdict.after is None:
        return None
    return verdict.after - verdict.before


def rank(candidates: Sequence[Checked]) -> list[Checked]:
    """Best first: the gate's "keep" before anything else, then the lowest delta, then the candidate's number.

    Without a gate every verdict is None and the order is the candidates' own.
    """

    def key(c: Checked) -> tuple[int, float, int]:
        keep = c.verdict is not None and c.verdict.advice == "keep"
        delta = delta_of(c.verdict)
        return (0 if keep else 1, delta if delta is not None else float("inf"), c.candidate or 0)

    return sorted(candidates, key=key)
