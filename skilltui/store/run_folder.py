"""The run folder: a self-contained, resumable record of one training run.

```
runs/<run-id>/
  config.json                         the settings; reopening with others is refused
  events.jsonl                        one JSON object per event
  memory/                             the pool (its own git repository)
  stories/<work>.md                   the story each work trained on
  epoch<E>/step<S>/works/<work>/      scripts/NN.fountain, reads.json, transcripts, done.json
  epoch<E>/step<S>/loss/<work>.md     loss report (+ <work>.json: its scores)
  epoch<E>/step<S>/backward/g<G>/     batch.json, summary.md, attempt<N>/, commit.txt
  val/                                validation: stories/, pool-<tree>/ (scripts, loss), points/
  lock                                held by the process training this run
```

Every stage decides whether it is done from its own artifacts, written last and
atomically, so a run killed anywhere resumes by running the same command again.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..core.durable import TEMP_NAME, write_atomic
from ..core.errors import UsageError
from ..core.json_read import BadJSON, read_json
from ..pool.notes import Pool

__all__ = ["Run", "RunLock", "read_json", "write_atomic", "write_json"]

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")

DECISION = "decision.json"  # a micro-step's round decision, recorded whole before it moves anything (decided.py)
OUTCOME = "commit.txt"  # a micro-step's final record, written last: its folder is done (micro_records.py)


def write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def derive_run_id(config: dict[str, Any]) -> str:
    """A stable id from the settings: the same command always reopens the same run."""
    works = config["works"]
    stem = "-".join(works[:3]) + (f"-and-{len(works) - 3}" if len(works) > 3 else "")
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:8]
    return f"{stem[:48]}-{digest}"


def check_run_id(run_id: str) -> str:
    if not RUN_ID.match(run_id):
        raise UsageError(f"--run-id {run_id!r} is not a plain name; use letters, digits, '.', '_' and '-'")
    return run_id


@dataclass
class Run:
    root: Path

    @property
    def id(self) -> str:
        return self.root.name

    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    @property
    def events_path(self) -> Path:
        return self.root / "events.jsonl"

    @cached_property
    def pool(self) -> Pool:
        # One Pool per run, so its header cache lives as long as the run does.
        return Pool(self.root / "memory")

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    def story_path(self, work: str) -> Path:
        return self.root / "stories" / f"{work}.md"

    def step_dir(self, epoch: int, step: int) -> Path:
        return self.root / f"epoch{epoch}" / f"step{step}"

    def work_dir(self, epoch: int, step: int, work: str) -> Path:
        return self.step_dir(epoch, step) / "works" / work

    def loss_dir(self, epoch: int, step: int) -> Path:
        return self.step_dir(epoch, step) / "loss"

    def loss_report(self, epoch: int, step: int, work: str) -> Path:
        return self.loss_dir(epoch, step) / f"{work}.md"

    def loss_scores(self, epoch: int, step: int, work: str) -> Path:
        return self.loss_dir(epoch, step) / f"{work}.json"

    def backward_dir(self, epoch: int, step: int, group: int) -> Path:
        return self.step_dir(epoch, step) / "backward" / f"g{group}"

    # Validation lives in its own folder, outside every epoch*/ folder, so no sandbox given a
    # step's folders (backward, reduce) can reach it: see engine/validation/validator.py.
    @property
    def val_dir(self) -> Path:
        return self.root / "val"

    def val_story_path(self, work: str) -> Path:
        return self.val_dir / "stories" / f"{work}.md"


def run_containing(path: Path) -> Path | None:
    """The run folder `path` is in (or is), if any.

    What a command writes for people (an exported skill, a report page) never goes inside a
    run: the run folder is the run's own record, and a resume or a reset may replace it.
    """
    resolved = Path(path).expanduser().resolve()
    for folder in (resolved, *resolved.parents):
        if (folder / "config.json").is_file() and ((folder / "events.jsonl").exists() or (folder / "memory").is_dir()):
            return folder
    return None


def check_config(run_dir: Path, config: dict[str, Any]) -> bool:
    """True when `run_dir` is an existing run with these settings; UsageError when the settings differ."""
    path = run_dir / "config.json"
    if not path.exists():
        # A run killed between taking its lock and writing its settings holds only the lock
        # (and perhaps a temporary file): that is an unstarted run, not someone else's folder.
        if run_dir.exists() and any(not _leftover(p.name) for p in run_dir.iterdir()):
            raise UsageError(f"{run_dir} exists but is not a skilltui run; choose another --run-id or --runs-dir")
        return False
    try:
        saved = read_json(path)
    except (BadJSON, OSError):
        saved = None
    if not isinstance(saved, dict):
        raise UsageError(f"{path} is unreadable (not a JSON object of settings); start a new run with another --run-id")
    if saved != config:
        diff = sorted(k for k in set(saved) | set(config) if saved.get(k) != config.get(k))
        shown = ", ".join(f"{k}: {saved.get(k)!r} -> {config.get(k)!r}" for k in diff[:3])
        raise UsageError(
            f"run {run_dir.name} was started with other settings ({shown}); "
            "repeat the original command to resume, or pass a new --run-id"
        )
    return True


def _leftover(name: str) -> bool:
    return name == "lock" or TEMP_NAME.match(name) is not None


# What a non-blocking flock says when another descriptor holds the lock; some filesystems
# answer EACCES rather than EWOULDBLOCK (filelock, which held the lock before, counted it too).
CONTENDED = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES})


def _try_lock(path: Path) -> int | None:
    """Open `path` (created if missing) and take an exclusive flock on it without waiting: the
    descriptor holding it, or None when another holds it.

    Never O_TRUNC, so a loser cannot empty the holder's file; O_NOFOLLOW, so a link put in its
    place is not followed; O_NONBLOCK, so a lease on the file cannot stall the open. A lock file
    another account made may be read-only to us, and flock works on a descriptor open for reading.
    """
    flags = os.O_NONBLOCK | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags | os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        fd = os.open(path, flags | os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in CONTENDED:
            return None
        raise
    return fd


def _unlock(fd: int) -> None:
    # Unlocked before it is closed: a trainer that inherited the descriptor shares the lock, and a
    # release means the run is free (the app releases only once its trainer has ended).
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class RunLock:
    """The run lock: one training process at a time, and others can tell one is there.

    An exclusive `flock` on the run's `lock` file, on a descriptor this lock opens and owns, so
    the kernel drops it when the holder dies however it dies (a killed run never leaves its run
    locked), and the file itself is left in place (`_leftover` knows it). It is the lock
    filelock took on the same file before, so an older skilltui and this one exclude each
    other. Tools that change a run (the history's revert and reset) take the same lock, so
    they cannot act under a live run.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / "lock"
        # Not tied to a thread: the app releases it from another thread than the one that took it.
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, never waiting: a second trainer is told at once. Taking it again while held does nothing."""
        if self._fd is not None:
            return
        self._fd = _try_lock(self.path)
        if self._fd is None:
            raise UsageError(f"run {self.path.parent.name} is being trained by another process; wait for it or stop it")

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            _unlock(fd)

    def held_fd(self) -> int | None:
        """The descriptor that holds the lock, or None when it is not held.

        A process started for the same session (the app's trainer) inherits it, so the kernel
        keeps the run locked until both are gone: an app killed while its trainer still
        finishes a stage must not let a second trainer into the same run.
        """
        return self._fd


def is_locked(run_dir: Path) -> bool:
    """True while some process trains this run (used by tools that must not change it underneath)."""
    path = run_dir / "lock"
    if not path.exists():
        return False
    probe = _try_lock(path)
    if probe is None:
        return True
    _unlock(probe)
    return False


def check_runs_dir(runs_dir: Path) -> Path:
    """--runs-dir must be a folder, or a path whose nearest existing parent is a folder we can write."""
    if runs_dir.exists():
        if not runs_dir.is_dir():
            raise UsageError(f"--runs-dir {runs_dir} is a file; pass a folder")
        if not os.access(runs_dir, os.W_OK | os.X_OK):
            raise UsageError(f"--runs-dir {runs_dir} is not writable; pass a folder you can write to")
        return runs_dir
    parent = runs_dir.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"--runs-dir {runs_dir} is under {parent}, which is a file; pass a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--runs-dir {runs_dir} cannot be made: {parent} is not writable")
    return runs_dir
