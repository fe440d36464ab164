"""The pool: the network's weights, as short markdown notes in a git repository.

Every note lives in one of a fixed set of folders and looks like this:

```
---
description: One line that tells the writer when to open this note.
---
## Guidance

The body: what to do, briefly, with an example.
```

The *headers* (path and description of every note) go into prompts; bodies are read on
demand through the traced file tools. Every update is exactly one commit, so `git log` is
the parameter history and every update is a readable diff.

The linter keeps notes short and findable. It runs over the whole pool when a pool is
created or seeded, and afterwards only over what a micro-step touched: a pool that passed
stays passed, so checking the change is checking the pool, at a cost that grows with the
size of the change and not with the size of the pool.
"""

from __future__ import annotations

import datetime as _dt
import errno
import os
import re
import shutil
from pathlib import Path

import git

from ..core.durable import fsync_dir, no_room
from ..core.errors import UsageError
from ..core.formats import (  # noqa: F401 - the note format, shared with the agents and the apps; kept importable here
    BODY_HEADING,
    FOLDERS,
    MAX_BODY_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_LINES,
    NoteHeaders,
    note_paths,
    parse_note,
    render_note,
)
from ..core.safe_text import controls_in, has_control, visible_line
from .damage import damaged, never_committed
from .repo import SAFE_GIT, Changes, PoolGit

__all__ = ["Changes", "Pool", "donor_notes", "lint_note", "parse_note", "render_note"]

NOTE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,60}\.md$")


def lint_note(rel: str, text: str) -> list[str]:
    """Every problem with one note, each as 'path: what is wrong'."""
    problems: list[str] = []
    shown = visible_line(rel)  # a name is the agent's text too: one line, nothing a terminal acts on
    parts = rel.split("/")
    if len(parts) != 2 or parts[0] not in FOLDERS:
        return [f"{shown}: notes live directly in one of the folders {', '.join(FOLDERS)}"]
    if not NOTE_NAME.match(parts[1]):
        problems.append(f"{shown}: name notes in lowercase letters, digits and hyphens, ending in .md")
    if has_control(plain := text.replace("\r\n", "\n")):  # Windows line ends are still plain text
        # A note is plain text; an escape sequence in one reaches every screen and prompt it is shown on.
        spelled = ", ".join(controls_in(plain)[:4])
        problems.append(f"{shown}: holds control characters ({spelled}); a note is plain text, remove them")
    meta, body, problem = parse_note(text)
    if problem:
        return problems + [f"{shown}: {problem}"]
    assert meta is not None
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append(f"{shown}: front matter needs a one-line description")
    elif "\n" in description.strip():
        problems.append(f"{shown}: the description must be one line")
    elif len(description) > MAX_DESCRIPTION_CHARS:
        problems.append(f"{shown}: description is {len(description)} characters; the limit is {MAX_DESCRIPTION_CHARS}")
    extra = sorted(set(meta) - {"description"})
    if extra:
        problems.append(f"{shown}: front matter holds only description (remove {', '.join(map(str, extra))})")
    lines = body.strip("\n").splitlines()
    if not lines or lines[0].strip() != BODY_HEADING:
        problems.append(f"{shown}: the body must start with the heading '{BODY_HEADING}'")
    else:
        if any(line.startswith("#") for line in lines[1:]):
            problems.append(f"{shown}: only one heading is allowed ('{BODY_HEADING}')")
        content = "\n".join(lines[1:]).strip()
        if not content:
            problems.append(f"{shown}: the body under '{BODY_HEADING}' is empty")
        if len(content) > MAX_BODY_CHARS:
            problems.append(f"{shown}: body is {len(content)} characters; the limit is {MAX_BODY_CHARS}")
    total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if total_lines > MAX_LINES:
        problems.append(f"{shown}: {total_lines} lines; the limit is {MAX_LINES}")
    return problems


class Pool(PoolGit):
    """The pool repository inside a run (or any folder given to `skilltui lint`).

    Reading (HEAD, status, commits, patches) is `PoolGit`'s; this class adds the writes a
    micro-step makes and the notes as files.
    """

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._headers = NoteHeaders(self.root)

    # -- repository ----------------------------------------------------------------------

    def init(self, seed: Path | None = None) -> str:
        """Create the repository with its first commit (and the seed's, if any); return HEAD.

        The repository is built in a temporary folder beside the pool and renamed into
        place, so a process killed anywhere in here leaves no pool or a whole one, never a
        repository without a first commit. A pool left that way by an older version (a
        `.git` with no object and no ref) holds nothing to keep and is made again; one that
        holds anything and does not read is damage (`has_commit` raises PoolDamaged), never
        made again.
        """
        if self.has_commit():
            return self.head()
        self.close()
        if self.exists():
            _remove_empty_repository(self.root / ".git")
        self.root.parent.mkdir(parents=True, exist_ok=True)
        build = self.root.with_name(f".{self.root.name}.tmp{os.getpid()}")
        shutil.rmtree(build, ignore_errors=True)
        try:
            # No template: the sample hooks are a dozen files nobody runs here.
            git.Git().execute(["git", *SAFE_GIT, "init", "-q", "--template=", "--initial-branch=main", str(build)])
            repo = git.Repo(build)
            with repo.config_writer() as config:
                config.set_value("user", "name", "skilltui")
                config.set_value("user", "email", "skilltui@localhost")
                config.set_value("commit", "gpgsign", "false")
                config.set_value("core", "autocrlf", "false")
                config.set_value("core", "excludesFile", os.devnull)
            first = ["git", *SAFE_GIT, "commit", "--allow-empty", "-q", "--no-verify", "-m", "pool: start empty"]
            repo.git.execute(first)
            if seed is not None:
                notes = donor_notes(seed)
                for rel in notes:
                    (build / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(Path(seed) / rel, build / rel)
                repo.git.execute(["git", *SAFE_GIT, "add", "-A", "-f"])
                message = f"pool: seed {len(notes)} notes from {seed}"
                repo.git.execute(["git", *SAFE_GIT, "commit", "-q", "--no-verify", "-m", message])
            repo.close()
            if self.root.is_dir():
                # Files already there (a pool folder made by hand, or one whose .git was removed above)
                # stay; the repository moves in under them and reconcile() keeps them under a ref.
                os.rename(build / ".git", self.root / ".git")
                shutil.rmtree(build, ignore_errors=True)
            else:
                os.rename(build, self.root)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)  # a failed start leaves nothing half-made
            raise
        fsync_dir(self.root.parent)
        self.close()  # a handle opened by has_commit() saw the repository before it moved in
        return self.head()

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run one git command that changes the pool (reading goes through `PoolGit`'s objects);
        `env` adds to the environment (a commit's dates)."""
        command = ["git", *SAFE_GIT, *args]
        try:
            return self.repo.git.execute(command, with_extended_output=False, strip_newline_in_stdout=True, env=env)
        except git.GitCommandError as exc:
            # git does not always say a write failed for want of room ("couldn't write '...lock'"),
            # and once a round's working copies are removed the disk has room again: it is asked now.
            if no_room(exc, self.root):
                raise OSError(errno.ENOSPC, f"No space left on device (git {args[0] if args else ''})") from exc
            raise

    def squash(self, before: str, message: str) -> str:
        """Fold every commit after `before` into one, so a micro-step is always exactly one commit."""
        self.git("reset", "-q", "--soft", before)
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)
        return self.head()

    def reset(self, rev: str) -> tuple[str, list[str]] | None:
        """Put the working tree and HEAD back at `rev`, keeping every uncommitted edit first.

        Edits no commit holds (a person's, made while training ran; an agent's left by an
        attempt that died) go under refs/skilltui/kept/<time> before `reset --hard` and
        `clean`, so a reset never loses a file without a named ref. Returns (the ref, the
        paths that differed) when there were any, for the caller's notice.
        """
        kept = None
        if not self.is_clean():
            kept = self.keep_worktree(f"kept/{stamp()}", "pool: uncommitted changes kept before a reset")
        self.git("reset", "-q", "--hard", rev)
        self.git("clean", "-q", "-fdx")
        return kept

    def keep_worktree(self, ref: str, message: str) -> tuple[str, list[str]]:
        """Keep the working tree as it is (untracked and ignored files too) as a commit on top of
        HEAD under refs/skilltui/<ref>, leaving HEAD, the index and the files alone.

        Returns (the full ref, the paths that differ from HEAD).
        """
        # A candidate's working copy is a git worktree, whose .git is a file: ask git where its folder is.
        index = Path(self.git("rev-parse", "--absolute-git-dir")) / f"skilltui-save.index{os.getpid()}"
        env = {**os.environ, "GIT_INDEX_FILE": str(index)}
        try:
            self.repo.git.execute(["git", *SAFE_GIT, "read-tree", "HEAD"], env=env)
            self.repo.git.execute(["git", *SAFE_GIT, "add", "-A", "-f"], env=env)
            tree = self.repo.git.execute(["git", *SAFE_GIT, "write-tree"], env=env, strip_newline_in_stdout=True)
        finally:
            index.unlink(missing_ok=True)
        commit = self.git("commit-tree", tree, "-p", "HEAD", "-m", message)
        paths = [path for _, path in self.files(commit)]
        return self.keep(ref, commit), paths

    def keep(self, ref: str, rev: str) -> str:
        """Keep `rev` reachable under refs/skilltui/<ref>, so a reset never loses a commit."""
        full = f"refs/skilltui/{ref}"
        self.git("update-ref", full, rev)
        return full

    def commit_all(self, message: str) -> str:
        """Stage every change and make one commit (empty allowed: 'nothing worth changing').

        Ignored files are staged too (`-f`): what is in the pool is what the checks see.
        """
        self.git("add", "-A", "-f")
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)
        return self.head()

    # -- notes ---------------------------------------------------------------------------

    def note_paths(self) -> list[str]:
        return note_paths(self.root)

    def headers(self) -> list[tuple[str, str]]:
        """(path, description) of every note, cached by file stat so a big pool costs stats, not reads."""
        return self._headers.read()

    @staticmethod
    def headers_text(headers: list[tuple[str, str]]) -> str:
        """The headers as the bullet list prompts show."""
        if not headers:
            return "(the pool is empty: no notes yet)"
        return "\n".join(f"- {rel}: {description}" for rel, description in headers)

    def lint(self, paths: list[str] | None = None) -> list[str]:
        """Problems in the given notes (relative paths), or in the whole pool when None."""
        if paths is None:
            paths = self.all_files()
        problems: list[str] = []
        for rel in paths:
            file = self.root / rel
            if file.is_symlink():
                problems.append(f"{rel}: is a symbolic link; a note is a plain file in the pool")
                continue
            if not file.is_file():
                continue
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                problems.append(f"{rel}: not UTF-8 text")
                continue
            problems.extend(lint_note(rel, text))
        return problems

    def all_files(self) -> list[str]:
        """Every file under the pool but git's own, as relative paths: what the note rules and the checks walk."""
        files: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            rel_dir = os.path.relpath(dirpath, self.root)
            # A candidate's working copy (`git worktree`) has a `.git` file, not a folder.
            names = [n for n in filenames if not (rel_dir == "." and n == ".git")]
            files.extend(name if rel_dir == "." else f"{rel_dir}/{name}" for name in names)
        return sorted(files)


def stamp() -> str:
    """A kept ref's time, to the microsecond so two in one second do not collide."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def _remove_empty_repository(git_dir: Path) -> None:
    """The one place a pool's `.git` may be removed: when it holds no object and no ref.

    Asked again here, next to the removal, so no caller's mistake can remove a repository
    with commits (tests/test_pool_damage.py fails on any other removal that could reach one).
    """
    if not never_committed(git_dir):
        raise damaged(git_dir.parent, "HEAD does not resolve, yet the repository holds objects or refs")
    shutil.rmtree(git_dir)


def donor_notes(source: Path) -> list[str]:
    """The notes of a pool given to --init-pool; UsageError if it is missing, empty or fails the linter."""
    source = Path(source)
    if not source.is_dir():
        raise UsageError(f"--init-pool {source} does not exist; pass a trained pool (a run's memory/ folder)")
    donor = Pool(source)
    notes = donor.note_paths()
    if not notes:
        raise UsageError(f"--init-pool {source} has no notes in {', '.join(FOLDERS)}; pass a run's memory/ folder")
    problems = donor.lint(notes)
    if problems:
        raise UsageError(f"--init-pool {source} fails the linter ({problems[0]}); run `skilltui lint {source}`")
    return notes


def changes_nothing(pool: Pool, sha: str) -> bool:
    """Whether commit `sha` leaves the notes as its parent had them (an empty commit)."""
    return pool.git("rev-parse", f"{sha}^{{tree}}") == pool.git("rev-parse", f"{sha}^^{{tree}}")
