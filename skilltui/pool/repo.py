"""Reading the pool's git repository: the one place that does, for the engine, the panes, the
history app and the backward agent's history tools.

The pool's `git log` is the parameter history, so everything that shows or checks an update
reads it. It is read through GitPython's objects (`Repo.iter_commits`, commit and tree
objects, references, `Repo.is_ancestor`), never by parsing git's text output; a patch is
git's own unified diff, split into files by `unidiff`. No Textual here: the engine and the
agents import it as the apps do.

Reads never take git's index lock (no `git status` refresh of the index, no `add`), except
`state()`, which the engine alone calls between its own writes. A commit never changes, so
the notes each one touched are worked out once per reader and kept.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import git
import unidiff

from ..core.errors import PoolDamaged
from ..model.commits import Commit
from .damage import damage_of, damaged, head_problem, never_committed

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id for a tree with nothing in it
KEPT = "refs/skilltui/"
REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
STATUS_WORDS = {"A": "added", "M": "changed", "D": "removed"}
# On the command line of every git the engine runs on a pool, whoever asked (training, an agent's
# commit, a history tool): a pool's config, whoever wrote it (a person, an older skilltui), cannot
# make git run a program (a hook, an fsmonitor command) or read the user's attribute rules.
SAFE_CONFIG = {
    "core.hooksPath": "/dev/null",
    "core.fsmonitor": "false",
    "core.attributesFile": "/dev/null",
    "commit.gpgSign": "false",
}
SAFE_GIT = tuple(arg for key, value in SAFE_CONFIG.items() for arg in ("-c", f"{key}={value}"))


def open_repo(root: Path) -> git.Repo:
    """A GitPython repository whose every git command carries SAFE_GIT."""
    repo = git.Repo(root)
    repo.git.set_persistent_git_options(c=[f"{key}={value}" for key, value in SAFE_CONFIG.items()])
    return repo


@dataclass(frozen=True)
class Changes:
    added: list[str]
    changed: list[str]
    removed: list[str]

    @property
    def touched(self) -> list[str]:
        return self.added + self.changed


@dataclass
class FilePatch:
    """One note's part of a patch: its hunks' lines, and how many lines it added and removed."""

    path: str
    status: str = "changed"  # added, changed, removed
    added: int = 0
    removed: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        sign = {"added": "+", "removed": "-"}.get(self.status, "~")
        return f"{sign} {self.path} ({self.status}, +{self.added} -{self.removed})"


def readable(path: str) -> str:
    """A path as text every record can hold: a byte that is not UTF-8 (git hands it over as a
    lone surrogate) is written `\\xe9`, so an event, a report or a pane never fails to encode it."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path


def split_patch(patch: str) -> list[FilePatch]:
    """A unified git patch (from git, or a micro-step's patch.diff) split into its files."""
    try:
        patched = unidiff.PatchSet(patch)
    except unidiff.UnidiffParseError:
        # Not a patch git wrote (a hand-edited patch.diff): show it whole rather than nothing.
        return [FilePatch("(unreadable patch)", lines=patch.splitlines())] if patch.strip() else []
    files = []
    for f in patched:
        status = "added" if f.is_added_file else "removed" if f.is_removed_file else "changed"
        lines = [line for hunk in f for line in str(hunk).rstrip("\n").split("\n")]
        # Diffs are taken --text (an attribute must not hide a note's lines), so a file is shown as
        # binary by its content: a NUL byte, git's own test.
        if f.is_binary_file or any("\x00" in line for line in lines):
            lines = ["\\ binary file"]
        files.append(FilePatch(readable(f.path), status, f.added, f.removed, lines))
    return files


def changes_of(files: list[FilePatch]) -> Changes:
    by = {"added": [], "changed": [], "removed": []}  # type: dict[str, list[str]]
    for f in files:
        by[f.status].append(f.path)
    return Changes(by["added"], by["changed"], by["removed"])


class PoolGit:
    """Read access to one pool repository, safe to share between threads.

    GitPython reads objects through one long-lived `git cat-file` process per repository, which
    two threads must not talk to at once: every read holds the lock and returns plain data.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._repo: git.Repo | None = None
        self._lock = threading.RLock()
        self._facts: dict[str, tuple[str, list[str], int]] = {}
        self._files: dict[str, list[tuple[str, str]]] = {}
        self._trees: dict[bytes, dict[str, git.objects.base.IndexObject]] = {}

    @property
    def repo(self) -> git.Repo:
        if self._repo is None:
            self._repo = open_repo(self.root)
        return self._repo

    def close(self) -> None:
        with self._lock:
            if self._repo is not None:
                self._repo.close()
                self._repo = None

    def exists(self) -> bool:
        return (self.root / ".git").is_dir()

    def has_commit(self) -> bool:
        """True when HEAD names a readable commit; False when there is no repository or one that
        holds nothing yet (no object, no ref: an init killed before its first commit).

        Anything else that does not read is damage, and raises PoolDamaged: a pool with commits
        is never taken for an empty one, whose `.git` may be made again.
        """
        if not self.exists():
            return False
        try:
            sha = self.head()
        except PoolDamaged:
            if never_committed(self.root / ".git"):
                return False
            raise
        with self._lock:
            try:
                self.repo.commit(sha).tree  # noqa: B018 - reading it is the check
            except (ValueError, git.BadName, git.BadObject, git.GitCommandError) as exc:
                raise damaged(self.root, f"HEAD's commit {sha[:7]} cannot be read ({damage_of(exc) or exc})") from None
        return True

    def head(self) -> str:
        """HEAD's commit id, read from the ref files alone (no object lookup: no lock, no process).

        PoolDamaged, naming the file and what is wrong with it, when HEAD does not resolve.
        """
        try:
            return git.SymbolicReference.dereference_recursive(self.repo, "HEAD")
        except (ValueError, AssertionError, TypeError, git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            self.close()
            what = head_problem(self.root / ".git") or f"HEAD cannot be read ({exc or type(exc).__name__})"
            raise damaged(self.root, what) from None

    def check_intact(self, rev: str = "HEAD", *, history: bool = False) -> None:
        """PoolDamaged when an object of `rev`'s notes (with `history`, of every commit before it
        too) cannot be read: said before a command starts, not as a failure halfway through."""
        args = ["rev-list", "--objects", "--verify-objects", rev, *(() if history else ("--no-walk",))]
        with self._lock:
            try:
                self.repo.git.execute(["git", *SAFE_GIT, *args])
            except git.GitCommandError as exc:
                found = damage_of(exc) or str(exc.stderr).strip().splitlines()[-1:]
                raise damaged(self.root, f"an object cannot be read ({found})") from None

    def is_clean(self) -> bool:
        return self.state()[1]

    def state(self) -> tuple[str, bool]:
        """(HEAD, clean): the question every check asks, at the price of one process.

        Not `Repo.is_dirty`: ignored files count here, so a `.gitignore` cannot let a note sit
        in the pool unseen by the checks. Anything `git status` lists at all means not clean.
        """
        listing = self.repo.git.status("--porcelain", "--untracked-files=all", "--ignored=matching")
        return self.head(), not listing

    def resolve(self, rev: str) -> str | None:
        """The full sha of the commit `rev` names, or None when it names none."""
        if not rev or rev.startswith("-"):
            return None
        with self._lock:
            try:
                return self.repo.commit(rev).hexsha
            except (git.BadName, ValueError, git.GitCommandError):
                return None

    def is_ancestor(self, older: str, newer: str) -> bool:
        with self._lock:
            try:
                # GitPython's stub says Commit, but it hands both to `git merge-base`, where any rev works.
                return self.repo.is_ancestor(older, newer)  # type: ignore[arg-type]
            except git.GitCommandError:
                return False  # a commit the repository does not have is no ancestor

    def parents(self, rev: str) -> list[str]:
        with self._lock:
            return [p.hexsha for p in self.repo.commit(rev).parents]

    def log(
        self, rev: str = "HEAD", limit: int | None = None, *, kept: bool = False, files: bool = False
    ) -> list[Commit]:
        """Commits of `rev`, newest first (with `kept`, every commit kept under refs/skilltui too;
        with `files`, the notes each touched). A commit never changes, so each is read once."""
        revs = [rev, f"--glob={KEPT}"] if kept else rev
        found = []
        with self._lock:
            # GitPython's stub says one rev, but it hands a list to `git rev-list` as it is.
            for c in self.repo.iter_commits(revs, max_count=limit, date_order=True):  # type: ignore[arg-type]
                facts = self._facts.get(c.hexsha)
                if facts is None:
                    message = str(c.message).strip("\n")
                    facts = self._facts[c.hexsha] = (message, [p.hexsha for p in c.parents], c.committed_date)
                found.append(Commit(c.hexsha, facts[0], list(facts[1]), facts[2], self._files_of(c) if files else []))
        return found

    def commits_between(self, before: str, after: str) -> list[tuple[str, str, str]]:
        """(sha, subject, body) of each commit after `before` up to `after`, oldest first."""
        found = []
        for c in reversed(self.log(f"{before}..{after}")):
            subject, _, body = c.message.partition("\n")
            found.append((c.sha, subject, body.strip()))
        return found

    def subject(self, rev: str) -> str:
        with self._lock:
            return str(self.repo.commit(rev).summary)

    def kept_refs(self) -> dict[str, list[str]]:
        """Each commit kept under refs/skilltui (a rerun, a roll back, a reset) and the names it has there."""
        refs: dict[str, list[str]] = {}
        with self._lock:
            for ref in self.repo.references:
                if ref.path.startswith(KEPT):
                    refs.setdefault(ref.commit.hexsha, []).append(ref.path.removeprefix(KEPT))
        return refs

    def files(self, rev: str) -> list[tuple[str, str]]:
        """(A/M/D, path) of every note the commit `rev` touched against its first parent."""
        with self._lock:
            return self._files_of(self.repo.commit(rev))

    def _files_of(self, commit: git.Commit) -> list[tuple[str, str]]:
        found = self._files.get(commit.hexsha)
        if found is None:
            before = commit.parents[0].tree if commit.parents else None
            found = self._files[commit.hexsha] = self._tree_changes(before, commit.tree)
        return list(found)

    def _entries(self, tree: git.Tree | None) -> dict[str, git.objects.base.IndexObject]:
        if tree is None:
            return {}
        entries = self._trees.get(tree.binsha)
        if entries is None:
            # By the last part of the path, not `item.name`: a submodule entry (a nested repository
            # committed by hand) has no name GitPython can give.
            entries = self._trees[tree.binsha] = {str(item.path).rsplit("/", 1)[-1]: item for item in tree}
        return entries

    def _tree_changes(self, before: git.Tree | None, after: git.Tree | None) -> list[tuple[str, str]]:
        # Same id, same content: only the folders whose tree changed are opened, so a commit
        # costs the folders it touched, not the size of the pool.
        old, new = self._entries(before), self._entries(after)
        found: list[tuple[str, str]] = []
        for name in sorted(old.keys() | new.keys()):
            a, b = old.get(name), new.get(name)
            if a is not None and b is not None and a.binsha == b.binsha:
                continue
            a_tree = a if a is not None and a.type == "tree" else None
            b_tree = b if b is not None and b.type == "tree" else None
            if a_tree is not None or b_tree is not None:
                found += self._tree_changes(a_tree, b_tree)
            if a is not None and a_tree is None:
                found.append(("D" if b is None or b_tree is not None else "M", readable(str(a.path))))
            elif b is not None and b_tree is None:
                found.append(("A", readable(str(b.path))))
        return found

    def patch(self, before: str, after: str) -> str:
        """git's unified diff from one commit to another (the empty tree stands for 'nothing')."""
        # --text and --no-textconv: a `.gitattributes` saying `-diff` or naming a converter must not
        # hide a note's lines from the checks that count them (--max-edit-lines).
        flags = ("--no-color", "--no-renames", "--no-ext-diff", "--text", "--no-textconv")
        return self.repo.git.diff(before, after, *flags)

    def commit_patch(self, rev: str) -> str:
        """The diff a commit made to the pool (the first commit against the empty tree)."""
        sha = self.resolve(rev)
        if sha is None:
            raise ValueError(f"{rev} is not a commit of the pool")
        parents = self.parents(sha)
        return self.patch(parents[0] if parents else EMPTY_TREE, sha)

    def diff(self, before: str, after: str) -> tuple[str, Changes]:
        """The patch and the notes it adds, changes and removes, from a single `git diff`."""
        patch = self.patch(before, after)
        return patch, changes_of(split_patch(patch))

    def changes(self, before: str, after: str) -> Changes:
        return self.diff(before, after)[1]

    def blob_text(self, rev: str, path: str) -> str | None:
        """A note as it was at `rev`, or None when it did not exist there."""
        with self._lock:
            try:
                blob = self.repo.commit(rev).tree / path
            except (KeyError, ValueError, git.BadName):
                return None
            if blob.type != "blob":
                return None
            return blob.data_stream.read().decode("utf-8", errors="replace")

    def message(self, rev: str) -> str:
        with self._lock:
            return str(self.repo.commit(rev).message)

    def notes_of(self, sha: str, ref: str) -> str:
        """The git note `ref` keeps on `sha` ("" when it has none): decisions made after the commit."""
        try:
            return str(self.repo.git.notes(f"--ref={ref}", "show", sha))
        except git.GitCommandError:
            return ""

    def reverted_by(self, sha: str) -> str | None:
        """The commit in HEAD's history that reverts `sha` (and was not reverted itself), or None."""
        reverts: dict[str, str] = {}
        for c in self.log(f"{sha}..HEAD"):
            found = REVERTS.search(c.message)
            if found:
                reverts.setdefault(found.group(1), c.sha)
        revert = next((by for target, by in reverts.items() if sha.startswith(target)), None)
        if revert is None or any(revert.startswith(t) for t in reverts):
            return None
        return revert
