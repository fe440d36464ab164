"""A full disk, for real: a run on a tiny tmpfs stops with one line naming the disk, and
resumes to a whole run once there is room.

The file system is mounted in a private mount namespace (`unshare`), so the test needs no
privileges where user namespaces are allowed, and is skipped where they are not.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import git
import pytest

from skilltui.core.durable import no_room

SCRIPT = r"""
set -u
mount -t tmpfs -o size={size}k tmpfs "$MNT"
run() {{ "$PY" -m skilltui train --auto --runs-dir "$MNT/runs" --run-id r --steps 2 --work "$A" --work "$B"; }}
run > "$OUT/out1" 2> "$OUT/err1"; echo $? > "$OUT/rc1"
find "$MNT/runs" -name '.*.tmp[0-9]*' -not -path '*/.git/*' > "$OUT/leftovers"
mount -o remount,size=64m "$MNT"
run > "$OUT/out2" 2> "$OUT/err2"; echo $? > "$OUT/rc2"
cp -a "$MNT/runs/r" "$OUT/run"
"""


def can_mount(tmp_path: Path) -> bool:
    if not shutil.which("unshare"):
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {probe}"], capture_output=True
    )
    return done.returncode == 0


# From the pool's first commit (40k) through forward and loss to the backward pass (360k);
# the whole run needs about 450k.
@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("size", [40, 120, 240, 360])
def test_a_full_disk_ends_the_run_with_one_line_and_it_resumes(make_work, tmp_path: Path, size: int) -> None:
    if not can_mount(tmp_path):
        pytest.skip("cannot mount a private tmpfs here (unshare -rm is not allowed)")
    works = [make_work("kiln-yard", 4), make_work("salt-road", 4)]
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    env = {
        "MNT": str(mnt),
        "OUT": str(out),
        "PY": sys.executable,
        "A": str(works[0]),
        "B": str(works[1]),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    subprocess.run(["unshare", "-rm", "sh", "-c", SCRIPT.format(size=size)], env=env, check=True, timeout=300)

    err = (out / "err1").read_text()
    lines = [line for line in err.splitlines() if line.strip()]
    assert (out / "rc1").read_text().strip() == "1", err
    assert len(lines) == 1 and "disk" in lines[0] and "full" in lines[0] and "Traceback" not in err, err
    assert (out / "leftovers").read_text() == ""
    events = [json.loads(line) for line in (out / "run" / "events.jsonl").read_text().splitlines()]
    failed = [e for e in events if e["kind"] == "stage" and e["status"] == "failed" and e["stage"] != "backward"]
    assert failed == [], failed  # the disk's fault, never a work's

    assert (out / "rc2").read_text().strip() == "0", (out / "err2").read_text()
    assert events[-1]["kind"] == "run_finished" and events[-1]["status"] == "finished"
    count = subprocess.run(
        ["git", "-C", str(out / "run" / "memory"), "rev-list", "--count", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # Two steps of one group each and the pool's first commit: the epoch's consolidation
    # changed nothing here, so it left no commit on the pool (its decision is kept under a ref).
    assert int(count) == 2 + 1


FILL_AT = r"""
import os, sys
from skilltui.engine.update import micro_step
from skilltui.pool.notes import Pool

point, nth = os.environ["FILL_POINT"], int(os.environ["FILL_AT"])
owner, name = (micro_step, "open_copy") if point == "open_copy" else (Pool, "keep")
real, calls = getattr(owner, name), [0]


def fill_then_call(*args, **kwargs):
    if point == "open_copy" or str(args[1]).startswith("candidates/"):  # a candidate's copy, or its ref
        calls[0] += 1
    if calls[0] != nth:
        return real(*args, **kwargs)
    calls[0] += 1
    filler = os.path.join(os.environ["MNT"], "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # the disk fills just as git makes it ...
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    os.close(fd)
    try:
        return real(*args, **kwargs)
    finally:
        os.unlink(filler)  # ... and has room again once it failed, as when a round's copies are removed


setattr(owner, name, fill_then_call)
from skilltui.cli import main

sys.exit(main(sys.argv[1:]))
"""

FILLED = r"""
set -u
mount -t tmpfs -o size=8m tmpfs "$MNT"
args="train --auto --runs-dir $MNT/runs --run-id r --steps 1 --episodes-per-step 1 --candidates 3 --no-consolidate"
"$PY" -c "$FILL" $args --work "$A" > "$OUT/out1" 2> "$OUT/err1"; echo $? > "$OUT/rc1"
find "$MNT/runs" -name '.*.tmp[0-9]*' -not -path '*/.git/*' > "$OUT/leftovers"
git -C "$MNT/runs/r/memory" worktree list --porcelain > "$OUT/worktrees" 2>&1
"$PY" -m skilltui $args --work "$A" > "$OUT/out2" 2> "$OUT/err2"; echo $? > "$OUT/rc2"
git -C "$MNT/runs/r/memory" fsck > "$OUT/fsck" 2>&1; echo $? > "$OUT/fsck_rc"
cp -a "$MNT/runs/r" "$OUT/run"
"""


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(("point", "n"), [("open_copy", 1), ("open_copy", 2), ("keep", 1), ("keep", 3)])
def test_a_disk_that_fills_under_a_candidates_git_ends_in_one_line_and_resumes(make_work, tmp_path, point, n) -> None:
    if not can_mount(tmp_path):
        pytest.skip("cannot mount a private tmpfs here (unshare -rm is not allowed)")
    work = make_work("kiln-yard", 2)
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    env = {
        "MNT": str(mnt),
        "OUT": str(out),
        "PY": sys.executable,
        "A": str(work),
        "FILL": FILL_AT,
        "FILL_AT": str(n),
        "FILL_POINT": point,
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    subprocess.run(["unshare", "-rm", "sh", "-c", FILLED], env=env, check=True, timeout=300)

    err = (out / "err1").read_text()
    lines = [line for line in err.splitlines() if line.strip()]
    assert (out / "rc1").read_text().strip() == "1", err
    assert len(lines) == 1 and "disk" in lines[0] and "full" in lines[0] and "a bug" not in err, err
    assert (out / "leftovers").read_text() == ""
    assert (out / "worktrees").read_text().count("worktree ") == 1, (out / "worktrees").read_text()  # the pool's own
    assert (out / "rc2").read_text().strip() == "0", (out / "err2").read_text()
    assert (out / "fsck_rc").read_text().strip() == "0", (out / "fsck").read_text()
    events = [json.loads(line) for line in (out / "run" / "events.jsonl").read_text().splitlines()]
    assert events[-1]["kind"] == "run_finished" and events[-1]["status"] == "finished"
    assert [e["decision"] for e in events if e["kind"] == "decision"] == ["approve"]


def test_a_ref_lock_git_could_not_write_is_a_full_disk_even_once_the_disk_has_room_again(tmp_path) -> None:
    """git names no cause for it, and by the time it is asked another stage may have freed room (seen in a run)."""
    lock = tmp_path / "memory" / ".git" / "refs" / "skilltui" / "candidates" / "0-0-1" / "1.lock"
    stderr = f"fatal: update_ref failed for ref 'refs/skilltui/candidates/0-0-1/1': couldn't write '{lock}'"
    unwritten = git.GitCommandError(["git", "update-ref", "refs/skilltui/candidates/0-0-1/1", "3f39b81"], 128, stderr)
    assert no_room(unwritten, tmp_path)  # tmp_path's disk has room now
    other = git.GitCommandError(["git", "update-ref", "x", "y"], 128, "fatal: not a valid SHA1: y")
    assert not no_room(other, tmp_path)
