"""Durable files: every record the project writes goes through `write_atomic`.

A record (a stage's marker, a transcript, a commit record, a story, a note an agent
writes) must be whole or absent after any crash, power cut included, because a resumed
run decides what is done from these files. So a write is: a temporary file in the same
folder (a rename across file systems is not atomic), flushed and fsynced, renamed over
the target, and the folder fsynced so the rename itself survives a power cut.

A process killed between the temporary file and the rename leaves `.NAME.tmpPID` behind;
`clean_temps` removes those of dead processes, and the run calls it on every open.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
from pathlib import Path

TEMP_NAME = re.compile(r"^\..+\.tmp(\d+)$")


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new entry in `folder` durable (no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a whole file or nothing: a reader never sees half of it, a crash never leaves half.

    On failure (a full disk, say) the temporary file is removed and the old file, if any,
    is untouched; the error goes up unchanged.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd = _open_new(tmp)
        try:
            view = memoryview(raw)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def _open_new(tmp: Path) -> int:
    """Open the temporary name as a new file, never through a link planted there.

    O_EXCL|O_NOFOLLOW: a symlink at that name (left by anyone who can write the folder) would
    otherwise redirect the write outside it. Whatever is there is a dead writer's leftover or
    such a link; it is removed (a link, not what it points at) and the name made afresh.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(tmp, flags, 0o644)
    except FileExistsError:
        os.unlink(tmp)
        return os.open(tmp, flags, 0o644)


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_temps(root: Path, *, skip: tuple[str, ...] = (".git",), all_dead: bool = False) -> list[Path]:
    """Remove the temporary files of dead writers under `root`; return what was removed.

    With `all_dead`, every temporary file counts as dead: the caller holds a lock that
    no live writer of this tree could hold at the same time (the run lock).
    """
    removed: list[Path] = []
    if not Path(root).is_dir():
        return removed

    def dead(name: str) -> bool:
        match = TEMP_NAME.match(name)
        if not match:
            return False
        pid = int(match.group(1))
        return all_dead or (pid != os.getpid() and not pid_alive(pid))

    for dirpath, dirnames, filenames in os.walk(root):
        # A folder built aside and renamed into place when whole (a new pool) is a temporary too.
        for name in [d for d in dirnames if dead(d)]:
            shutil.rmtree(Path(dirpath) / name, ignore_errors=True)
            removed.append(Path(dirpath) / name)
        dirnames[:] = [d for d in dirnames if d not in skip and not TEMP_NAME.match(d)]
        for name in filenames:
            if dead(name):
                with contextlib.suppress(OSError):
                    (Path(dirpath) / name).unlink()
                    removed.append(Path(dirpath) / name)
    return removed


NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
# How a full disk reads in an error's text (a git command's stderr). git names no cause when
# writing a ref's lock file fails ("couldn't write '.../main.lock'"): the file was just
# created, so its few bytes could not go for want of room. Asking the disk after the fact is
# no answer there, since another stage may have freed room in between.
NO_ROOM_TEXT = re.compile(
    r"No space left on device|Disk quota exceeded|Out of diskspace|File too large|couldn't write '[^']*\.lock'"
)


def no_room(exc: BaseException, root: Path | None = None) -> bool:
    """True when a failure comes from a disk that cannot take more, not from the work itself.

    The error may arrive wrapped (a tool's write inside an agent, a git command's stderr),
    so the chain and the message are read; with `root`, the free space of its disk is
    asked too, since a work must not be marked failed for what is the disk's fault.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in NO_ROOM:
            return True
        if NO_ROOM_TEXT.search(str(seen)):
            return True
        seen = seen.__cause__ or seen.__context__
    if root is None:
        return False
    try:
        stat = os.statvfs(root)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < 64 * 1024
