"""The backward agent's read-only view of the pool's history: `pool_log` and `pool_show`.

The pool's `git log` is the parameter history, and an optimizer that cannot see it repeats
updates that already failed. Its sandbox refuses `.git` (a writable git folder would let
it rewrite history), so these two tools read the history for it, through GitPython's
objects (`skilltui.pool.repo`, the one reader of the pool's git), never through a shell:

- `pool_log [limit]`: the recent commits of the pool, newest first, each with its subject
  and, for commits made by training, what the run recorded about it (the decision, who
  made it, the loss around it), supplied by the engine as `annotate(sha)`;
- `pool_show REV [PATH]`: a commit's message and the diff it made, or with PATH the note
  as it was at REV (`HEAD~2`, a short sha, a kept `refs/skilltui/...` ref).

Both backends and the offline backend offer them under the same names.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from pathlib import Path

import git

from ..pool.repo import PoolGit, open_repo
from .tools import MAX_VIEW_CHARS, ToolCode, ToolError

MAX_LOG = 100

LOG_DESCRIPTION = (
    "Read-only: the pool's recent commits, newest first: short sha, date, subject and, for "
    "training commits, the review decision, who made it and the loss before and after."
)
SHOW_DESCRIPTION = (
    "Read-only: show one commit of the pool (its message and the diff it made), or, with "
    "path, a note as it was at that commit. rev is a sha, HEAD~N or a refs/skilltui/... ref."
)
LOG_SCHEMA = {
    "type": "object",
    "properties": {"limit": {"type": "integer", "description": f"How many commits (default 20, at most {MAX_LOG})."}},
}
SHOW_SCHEMA = {
    "type": "object",
    "properties": {
        "rev": {"type": "string", "description": "The commit: a sha, HEAD, HEAD~2, refs/skilltui/..."},
        "path": {"type": "string", "description": "Optional: a note path relative to the pool, e.g. scene/x.md."},
    },
    "required": ["rev"],
}


class PoolHistory:
    """The history tools over one pool repository. `annotate(sha)` adds the run's record of a commit."""

    def __init__(self, root: Path, annotate: Callable[[str], str | None] | None = None) -> None:
        self.root = Path(root)
        self.annotate = annotate or (lambda sha: None)

    def _repo(self) -> git.Repo:
        return open_repo(self.root)

    def log(self, limit: int = 20) -> str:
        limit = max(1, min(int(limit), MAX_LOG))
        repo = self._repo()
        try:
            lines = []
            for commit in repo.iter_commits("HEAD", max_count=limit):
                when = _dt.datetime.fromtimestamp(commit.committed_date, _dt.UTC).strftime("%Y-%m-%d %H:%M")
                subject = str(commit.summary)
                line = f"{commit.hexsha[:10]} {when} {subject}"
                note = self.annotate(commit.hexsha)
                if note:
                    line += f"\n           {note}"
                lines.append(line)
        finally:
            repo.close()
        return "\n".join(lines) or "(no commits)"

    def show(self, rev: str, path: str | None = None) -> str:
        if not rev or rev.startswith("-") or "\x00" in rev:
            raise ToolError(
                "pool_show needs a revision such as HEAD, HEAD~1 or a sha from pool_log", ToolCode.BAD_ARGUMENT
            )
        if ":" in rev and not path:
            rev, path = rev.split(":", 1)  # git's REV:PATH, as a model may well write it
            rev = rev or "HEAD"
        repo = self._repo()
        try:
            commit = _commit(repo, rev)
            if path:
                return _note_at(commit, path)
            reader = PoolGit(self.root)
            try:
                patch = reader.commit_patch(commit.hexsha)
            finally:
                reader.close()
            message = commit.message if isinstance(commit.message, str) else commit.message.decode("utf-8", "replace")
            head = f"commit {commit.hexsha}\n\n{message.strip()}\n"
            note = self.annotate(commit.hexsha)
            if note:
                head += f"\n[{note}]\n"
            return _capped(head + "\n" + (patch or "(no changes: an empty commit)"), f"pool_show {rev} PATH")
        finally:
            repo.close()


def _commit(repo: git.Repo, rev: str) -> git.Commit:
    """The commit `rev` names, resolved by git itself; ToolError for anything else.

    Not GitPython's own parser: `@{-1}`, `HEAD@{99}`, `HEAD@{yesterday}` or `main@{push}`
    raise IndexError, NotImplementedError or a BadObject that cannot print itself there,
    and an error the tool layer does not expect aborts the whole backward attempt.
    """
    try:
        sha = repo.git.rev_parse("--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        return repo.commit(sha)
    except (git.GitCommandError, ValueError, IndexError, NotImplementedError, git.BadName, git.BadObject):
        raise ToolError(
            f"{rev!r} is not a commit of the pool; take a sha from pool_log, or HEAD~N", ToolCode.NOT_FOUND
        ) from None


def _note_at(commit: git.Commit, path: str) -> str:
    rel = path.strip().removeprefix("./").strip("/")
    try:
        blob = commit.tree / rel if rel not in ("", ".") else commit.tree
    except KeyError:
        short = commit.hexsha[:10]
        raise ToolError(
            f"{rel} does not exist at {short}; list the notes it had with pool_show {short} .", ToolCode.NOT_FOUND
        ) from None
    if not isinstance(blob, git.Blob):
        items = blob.traverse() if isinstance(blob, git.Tree) else iter(())
        names = "\n".join(str(item.path) for item in items if isinstance(item, git.Blob))
        return names or "(empty folder)"
    return _capped(blob.data_stream.read().decode("utf-8", errors="replace"), "view on the note in the pool")


def _capped(text: str, read_on: str) -> str:
    """At most MAX_VIEW_CHARS, and when cut, a last line that says so and how to read the rest."""
    if len(text) <= MAX_VIEW_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_VIEW_CHARS) + 1 or MAX_VIEW_CHARS
    return text[:cut] + f"[cut here after {cut:,} of {len(text):,} characters; read one note at a time with {read_on}]"
