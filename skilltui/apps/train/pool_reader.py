"""Reading the pool for the panes: notes, commits and one commit's patch, off the event loop.

Every method here blocks (git runs as a subprocess, notes are files), so the app only
calls them through `asyncio.to_thread`. It reads git through `PoolGit` and the notes through
`formats.NoteHeaders`, never the engine's `Pool` (whose writes are the engine's alone). It
has its own `PoolGit`, header cache and lock, so a read that the app abandoned (the person
moved on) can never share a repository handle with the next one, nor with the engine,
which keeps its own.

Only reads that never take git's index lock are used (the log, objects, `git diff` between
commits), so a pane refreshing while the backward agent commits cannot make that commit
fail.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import git

from ...core.formats import NoteHeaders
from ...model.commits import Commit
from ...pool.repo import PoolGit

COMMIT_LIMIT = 500


@dataclass
class PoolView:
    """What a read of the pool returned: its notes (path, description) and its commits, newest first."""

    notes: list[tuple[str, str]] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    head: str = ""


class PoolReader:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._pool: PoolGit | None = None
        self._headers = NoteHeaders(self.root)
        self._lock = threading.Lock()

    def _repo(self) -> PoolGit:
        if self._pool is None:
            self._pool = PoolGit(self.root)
        return self._pool

    def read(self) -> PoolView:
        """The notes (path, description) and the commits of HEAD, newest first."""
        with self._lock:
            pool = self._repo()
            if not pool.has_commit():
                return PoolView()
            try:
                notes = self._headers.read()
            except FileNotFoundError:
                # A note vanished between listing and reading: a reset is under way. The
                # PoolChanged event that follows it asks for a fresh read.
                notes = []
            commits = pool.log("HEAD", COMMIT_LIMIT)
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
                return self._repo().commit_patch(sha)
            except (git.GitCommandError, git.BadName, ValueError):
                return ""
