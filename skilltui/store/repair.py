"""`skilltui repair RUN`: put a damaged pool back on the newest intact commit its run recorded.

A pool whose HEAD does not resolve (an orphan checkout, a deleted `main`, a ref file a power
cut left empty or full of NULs, a garbage `.git/HEAD`) or whose HEAD commit has an object
that cannot be read stops every command with one line (`skilltui.pool.damage`). This is the
way on that needs no git knowledge:

1. the damaged state is kept first, under `refs/skilltui/damaged/<time>`: a commit holding
   the pool's files as they are, whose message records what HEAD and `main` held (raw
   bytes), with the old `main` as parent when that commit still reads;
2. the run's records are read newest first (the events' heads and decisions, then the
   micro-steps' commit records, then the kept refs), and the first commit whose every
   object reads (`git rev-list --objects --verify-objects`) is the one;
3. `main` points at it, HEAD at `main`, and the index is rebuilt from it. The files are
   left alone: the next `train` keeps what differs under `refs/skilltui/kept/...`, as it
   does for any hand edit, so nothing is lost;
4. a `pool_changed` event records the new head.

It runs git directly (not GitPython's `Repo`, which refuses a repository whose HEAD is
garbage), with hooks and fsmonitor off, under the run lock.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import git

from ..core.durable import write_atomic
from ..core.errors import UsageError
from ..model import events as ev
from ..model.bus import JsonlSink
from ..model.parse import read_run
from ..pool.damage import SHA, head_problem, read_ref
from ..pool.repo import SAFE_GIT
from .run_folder import OUTCOME, Run, RunLock, read_json

MAIN = "refs/heads/main"


def recorded_commits(run: Run) -> list[str]:
    """Every commit the run's records name as the pool's head at some point, newest first."""
    found: list[object] = []  # a damaged record may name anything: each is checked below
    for event in read_run(run.events_path).events:
        if isinstance(event, ev.PoolChanged):
            found.append(event.head)
        elif isinstance(event, ev.HistoryAction):
            found.append(event.after)
        elif isinstance(event, ev.DecisionMade):
            found.append(event.after if event.decision == "approve" else event.before)
        elif isinstance(event, ev.MicroStepSkipped):
            found.append(event.before)
    for record in sorted(run.root.glob(f"epoch*/step*/backward/g*/{OUTCOME}"), key=_record_order):
        try:
            data = read_json(record)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            found.append(data.get("after"))
    newest_first: list[str] = []
    for sha in reversed(found):
        if isinstance(sha, str) and sha and sha not in newest_first:
            newest_first.append(sha)
    return newest_first


def _record_order(path: Path) -> tuple[int, ...]:
    group, step, epoch = path.parent.name, path.parent.parent.parent.name, path.parents[3].name
    return tuple(int("".join(c for c in name if c.isdigit()) or 0) for name in (epoch, step, group))


class _Git:
    """git in the pool folder, hooks and fsmonitor off, without GitPython's checks of HEAD."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._git = git.Git(root)

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> str:
        return self._git.execute(["git", *SAFE_GIT, *args], env=env, strip_newline_in_stdout=True)

    def intact(self, sha: str) -> bool:
        """True when `sha` is a commit and every object it reaches can be read."""
        if SHA.match(sha.encode("ascii", errors="replace")) is None:
            return False
        try:
            self("cat-file", "-e", f"{sha}^{{commit}}")
            self("rev-list", "--objects", "--verify-objects", sha)
        except git.GitCommandError:
            return False
        return True

    def kept(self) -> list[str]:
        """The commits kept under refs/skilltui, newest first (broken refs are skipped by git)."""
        try:
            out = self("for-each-ref", "--sort=-committerdate", "--format=%(objectname)", "refs/skilltui/")
        except git.GitCommandError:
            return []
        return out.split()


def repair(run_dir: Path) -> str:
    """Repair the pool of the run at `run_dir` as the module docstring says; return the line to print."""
    run = Run(Path(run_dir).resolve())  # git runs in the pool: every path it is given must be absolute
    if not run.config_path.is_file():
        raise UsageError(f"{run_dir} is not a run folder (no config.json); pass a folder under --runs-dir")
    git_dir = run.pool.root / ".git"
    if not git_dir.is_dir():
        raise UsageError(f"run {run.id} has no pool repository ({git_dir} is missing); there is nothing to repair")
    lock = RunLock(run.root)
    lock.acquire()
    try:
        return _repair(run, git_dir)
    except git.GitCommandError as exc:
        said = str(exc.stderr).strip().removeprefix("stderr:").strip(" '").splitlines()
        raise UsageError(
            f"repair stopped: git said {said[-1] if said else exc}; nothing was deleted. "
            f"See the damage with `git -C {run.pool.root} fsck`"
        ) from None
    finally:
        lock.release()


SAVED_HEAD = "skilltui-damaged-HEAD"  # a garbage HEAD's bytes, kept on disk before HEAD is rewritten


def _repair(run: Run, git_dir: Path) -> str:
    for stale in git_dir.glob("skilltui-*.index*"):  # a killed repair's or reset's index: the lock is ours
        stale.unlink()
    saved = git_dir / SAVED_HEAD
    if saved.is_file():  # a repair killed after it rewrote HEAD: the damaged bytes are these
        raw_head = saved.read_bytes()
    else:
        raw_head = (git_dir / "HEAD").read_bytes() if (git_dir / "HEAD").is_file() else b""
    raw_main = read_ref(git_dir, MAIN)
    problem = head_problem(git_dir)
    if saved.is_file():
        problem = f".git/HEAD held {raw_head[:40]!r} (a repair killed after rewriting it kept these bytes)"
    g = _Git(run.pool.root)
    old = raw_main.strip().decode("ascii", errors="replace") if raw_main else ""
    if problem is None:
        current = raw_head[5:].strip().decode() if raw_head.startswith(b"ref: ") else raw_head.strip().decode()
        head = read_ref(git_dir, current) if raw_head.startswith(b"ref: ") else raw_head
        sha = (head or b"").strip().decode("ascii", errors="replace")
        if g.intact(sha):
            return f"the pool of run {run.id} is not damaged: HEAD {sha[:7]} reads whole; nothing to repair"
        problem = f"HEAD's commit {sha[:7]} has objects that cannot be read"
    if problem.startswith(".git/HEAD"):
        # git will not run at all in a repository whose HEAD is garbage; its bytes are kept below,
        # and on disk first, so a kill between here and there loses none of them.
        if not saved.is_file():
            write_atomic(saved, raw_head)
        write_atomic(git_dir / "HEAD", f"ref: {MAIN}\n")
    candidates = recorded_commits(run) + g.kept()
    target = next((sha for sha in candidates if g.intact(sha)), None)
    if target is None:
        raise UsageError(
            f"no commit the records of run {run.id} name can be read whole, so nothing was changed; "
            f"see the damage with `git -C {run.pool.root} fsck`"
        )
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    ref = f"refs/skilltui/damaged/{stamp}"
    g("update-ref", ref, _keep_damaged(g, git_dir, raw_head, raw_main, old, problem))
    saved.unlink(missing_ok=True)  # its bytes are in the damaged commit's message now
    loose = git_dir / MAIN
    if loose.is_file() and SHA.match(loose.read_bytes().strip()) is None:
        # git will not update a ref it cannot read; its old bytes are in the damaged commit's message.
        write_atomic(loose, target + "\n")
    else:
        g("update-ref", MAIN, target)
    g("symbolic-ref", "HEAD", MAIN)
    g("read-tree", target)  # the index only: the files stay as they are, for the next train to keep
    subject = g("log", "-1", "--format=%s", target)
    sink = JsonlSink(run.events_path)
    try:
        sink(ev.PoolChanged(head=target, reason=f"repair: {problem}; the damaged state is kept as {ref}"))
    finally:
        sink.close()
    return (
        f"repaired the pool of run {run.id} ({problem}): main points at {target[:7]} '{subject}', the newest "
        f"intact commit the run recorded; the damaged state is kept as {ref}. Run the same train command to go on"
    )


def _keep_damaged(g: _Git, git_dir: Path, raw_head: bytes, raw_main: bytes | None, old: str, problem: str) -> str:
    """A commit of the pool's files as they are, its message the raw HEAD and main; returns its id."""
    index = git_dir / f"skilltui-repair.index{os.getpid()}"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    try:
        g("add", "-A", "-f", env=env)
        tree = g("write-tree", env=env)
    finally:
        index.unlink(missing_ok=True)
    message = (
        f"pool: damaged state kept by skilltui repair\n\n{problem}\n"
        f"HEAD held: {raw_head!r}\n{MAIN} held: {raw_main!r}\n"
    )
    parents = ["-p", old] if old and g.intact(old) else []
    return g("commit-tree", tree, *parents, "-m", message)
