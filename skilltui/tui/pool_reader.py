"""Reading the pool for the panes: notes, commits and one commit's patch, off the event loop.

Every method here blocks (git runs as a subprocess, notes are files), so the app only
calls them through `asyncio.to_thread`. The reader has its own `Pool` object and a lock,
so a read that the app abandoned (the person moved on) can never share a repository
handle with the next one, nor with the engine, which keeps its own.

Only commands that never take git's index lock are used (`log`, `show`, `cat-file`), so a
pane refreshing while the backward agent commits cannot make that commit fail.
"""

from __future__ import annotations

import threading
from pathlib import Path

import git

from ..engine.pool import Pool
from .state import Commit, PoolView

COMMIT_LIMIT = 500
SEPARATOR = "\x1f"


class PoolReader:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._pool: Pool | None = None
        self._lock = threading.Lock()

    def _repo(self) -> Pool:
        if self._pool is None:
            self._pool = Pool(self.root)
        return self._pool

    def read(self) -> PoolView:
        """The notes (path, description) and the commits of HEAD, newest first."""
        with self._lock:
            pool = self._repo()
            if not pool.exists():
                return PoolView()
            try:
                notes = pool.headers()
            except FileNotFoundError:
                # A note vanished between listing and reading: a reset is under way. The
                # PoolChanged event that follows it asks for a fresh read.
                notes = []
            out = pool.git("log", f"-n{COMMIT_LIMIT}", f"--format=%H{SEPARATOR}%s", "HEAD")
            commits = []
            for line in out.splitlines():
                sha, _, subject = line.partition(SEPARATOR)
                commits.append(Commit(sha, subject))
            return PoolView(notes=notes, commits=commits, head=commits[0].sha if commits else "")

    def note(self, rel: str) -> str:
        path = self.root / rel
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def patch(self, sha: str) -> str:
        """The patch a commit made to the pool (an empty commit has none)."""
        with self._lock:
            try:
                return self._repo().git("show", "--format=", "--no-color", "--no-renames", sha)
            except git.GitCommandError:
                return ""
