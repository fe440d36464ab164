"""The run lock across processes: one trainer per run, told at once, and an older skilltui's lock
(filelock's flock on the same `lock` file) and today's exclude each other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skilltui.core.errors import UsageError
from skilltui.store.run_folder import RunLock, is_locked

# What an older skilltui held: filelock's FileLock, an exclusive flock on the run's `lock` file.
OLDER_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("held", flush=True)
sys.stdin.read()
"""

# Another trainer of today's skilltui trying the same run.
SECOND_TRAINER = """
import sys
from pathlib import Path
from skilltui.core.errors import UsageError
from skilltui.store.run_folder import RunLock, is_locked
try:
    RunLock(Path(sys.argv[1])).acquire()
except UsageError as exc:
    print(is_locked(Path(sys.argv[1])), exc)
else:
    print("acquired")
"""


def _second_trainer(run_dir: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SECOND_TRAINER, str(run_dir)], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


@pytest.mark.subprocess
def test_a_second_process_is_refused_at_once_with_one_line(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    lock = RunLock(run_dir)
    assert not is_locked(run_dir) and lock.held_fd() is None
    lock.acquire()
    try:
        assert lock.held_fd() is not None
        assert _second_trainer(run_dir) == "True run r is being trained by another process; wait for it or stop it"
    finally:
        lock.release()
    assert lock.held_fd() is None and not is_locked(run_dir)
    assert (run_dir / "lock").exists()  # left in place: a run folder holding only it is an unstarted run
    assert _second_trainer(run_dir) == "acquired"


@pytest.mark.subprocess
def test_a_lock_an_older_skilltui_holds_keeps_this_one_out(tmp_path: Path) -> None:
    older = subprocess.Popen(
        [sys.executable, "-c", OLDER_HOLDER, str(tmp_path / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert older.stdin is not None and older.stdout is not None
    try:
        assert older.stdout.readline().strip() == "held"
        assert is_locked(tmp_path)
        with pytest.raises(UsageError, match="being trained by another process"):
            RunLock(tmp_path).acquire()
    finally:
        older.stdin.close()  # it ends when its stdin does, and the kernel drops its lock
        assert older.wait(timeout=60) == 0
    lock = RunLock(tmp_path)
    lock.acquire()
    lock.release()
