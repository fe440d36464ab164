"""File tools and their sandbox: the only way an agent touches disk.

Each role is given roots it may read and roots it may write. Every path an agent names is
resolved (symlinks and `..` included) and checked against those roots before anything is
opened, and anything off-limits is refused with a `ToolError` whose message the agent can
read and act on. The writer can therefore never see a work's human episodes or a loss
report: those paths are not in its roots, whatever its prompt says.

The command set follows Anthropic's text editor tool (`view`, `create`, `str_replace`,
`insert`), which Claude models are trained on, plus `commit` for the backward pass and the
read-only history tools `pool_log` and `pool_show` (see `pool_history.py`). Every read of
a file under a traced root is recorded, so the backward pass can tell which notes the
writer used for which episodes.

A relative path means what the prompt that gave it means: prompts list notes relative to
the pool, so `base` is the pool for every role, and a path that is not there is reported
with the folder it was looked for in.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from ..core.durable import write_atomic
from ..core.words import counted

MAX_VIEW_CHARS = 60_000
MAX_LISTING = 500


class ToolCode(StrEnum):
    """What kind of refusal a `ToolError` is, for code that acts on it; an agent reads the message.

    The offline backward agent tries other invented examples after a `LEAK`, and gives up on
    a note after any other refusal of its commit: it asks the code, so rewording a message
    (the part a model reads) cannot change what it does.
    """

    BAD_ARGUMENT = "bad_argument"  # a missing or malformed argument, an unknown command
    OFF_LIMITS = "off_limits"  # outside the roots, denied, in git, hard-linked
    NOT_FOUND = "not_found"  # no such file, or not a file where one is needed
    NOT_TEXT = "not_text"  # not UTF-8
    NO_MATCH = "no_match"  # str_replace's old_str found no time, or more than once
    NO_TOOL = "no_tool"  # this agent was not given that tool (commit, history)
    NOT_COMMITTED = "not_committed"  # the commit tool's checks refused: lint, edit budget, pool budget
    LEAK = "leak"  # the commit tool refused: a note names or copies a training work
    FAILED = "failed"  # anything else (a mailbox answer's error, a history lookup)


class ToolError(Exception):
    """A refused or failed tool call. Its message goes back to the agent as a tool error; `code` says its kind."""

    def __init__(self, message: str, code: ToolCode = ToolCode.FAILED) -> None:
        super().__init__(message)
        self.code = code


class History(Protocol):
    """The read-only view of the pool's history the backward agent is given (`PoolHistory`)."""

    def log(self, limit: int = 20) -> str: ...

    def show(self, rev: str, path: str | None = None) -> str: ...


@dataclass
class Sandbox:
    """The roots one agent call may read and write, and the trace of what it read.

    `read_roots` and `write_roots` are directories; writing implies reading. `denied`
    lists paths that stay off-limits even inside a readable root (a work's `human/`,
    the run's loss reports). `traced` is the root whose reads are recorded (the pool).
    `base` is the folder relative paths are taken from (the pool, where prompts list the
    notes); without it, the first write root (or read root). `history`, when given, adds
    the `pool_log` and `pool_show` tools.
    """

    read_roots: list[Path]
    write_roots: list[Path] = field(default_factory=list)
    denied: list[Path] = field(default_factory=list)
    traced: Path | None = None
    reads: list[str] = field(default_factory=list)
    on_commit: Callable[[str], str] | None = None
    base: Path | None = None
    history: History | None = None

    def __post_init__(self) -> None:
        self.read_roots = [Path(os.path.realpath(p)) for p in self.read_roots]
        self.write_roots = [Path(os.path.realpath(p)) for p in self.write_roots]
        self.denied = [Path(os.path.realpath(p)) for p in self.denied]
        if self.traced is not None:
            self.traced = Path(os.path.realpath(self.traced))
        if self.base is not None:
            self.base = Path(os.path.realpath(self.base))

    @property
    def folder(self) -> Path:
        """Where a relative path is looked for."""
        if self.base is not None:
            return self.base
        return (self.write_roots or self.read_roots)[0]

    # -- path checks -------------------------------------------------------------------

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The real path of `path` if this call may touch it; ToolError otherwise.

        Relative paths are taken from `folder` (the pool, where the prompts list the notes),
        so a note opens by the path it is listed under.
        """
        if not isinstance(path, str) or not path.strip():
            raise ToolError("a path is required", ToolCode.BAD_ARGUMENT)
        if "\x00" in path:
            raise ToolError("the path contains a NUL byte", ToolCode.BAD_ARGUMENT)
        raw = Path(path)
        if not raw.is_absolute():
            raw = self.folder / raw
        real = Path(os.path.realpath(raw))
        roots = self.write_roots if write else self.read_roots + self.write_roots
        # A refusal never quotes the refused path back: an agent given a held-out path (or a link
        # into one) learns from the error that it is off-limits, and nothing of where it leads.
        if not any(_inside(real, root) for root in roots):
            verb = "write" if write else "read"
            allowed = ", ".join(str(r) for r in roots) or "nothing"
            raise ToolError(f"that path is off-limits: this agent may {verb} only under {allowed}", ToolCode.OFF_LIMITS)
        # Refusals compare folded names: on a case-insensitive file system (macOS, Windows)
        # `.GIT/config` and `HUMAN/01.fountain` are the very files the plain names stand for.
        if any(_inside_folded(real, d) for d in self.denied) or any(_inside_folded(raw, d) for d in self.denied):
            raise ToolError(
                "that path is off-limits to this agent: it holds material this agent may not read", ToolCode.OFF_LIMITS
            )
        if any(is_git_name(part) for part in (*real.parts, *Path(os.path.normpath(raw)).parts)):
            raise ToolError(
                f"{path} is in a git folder or is a git file; use the commit tool instead", ToolCode.OFF_LIMITS
            )
        if real.is_file() and real.stat().st_nlink > 1:
            # A hard link is the same file as another name, perhaps one this agent may not read.
            raise ToolError(
                f"{path} has other hard links; the sandbox cannot tell where they lead, so it is refused",
                ToolCode.OFF_LIMITS,
            )
        return real

    def _trace(self, real: Path) -> None:
        if self.traced is not None and _inside(real, self.traced) and real.is_file():
            rel = str(real.relative_to(self.traced))
            if rel not in self.reads:
                self.reads.append(rel)

    # -- the commands ------------------------------------------------------------------

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        real = self.resolve(path)
        if real.is_dir():
            entries = []
            for entry in sorted(real.rglob("*")):
                if any(is_git_name(part) for part in entry.relative_to(real).parts):
                    continue
                if any(_inside_folded(entry, d) for d in self.denied):
                    continue
                entries.append(str(entry.relative_to(real)) + ("/" if entry.is_dir() else ""))
                if len(entries) >= MAX_LISTING:
                    entries.append("... (listing cut short)")
                    break
            return "\n".join(entries) or "(empty folder)"
        lines = self.read_text(path).splitlines()
        if view_range:
            if len(view_range) != 2:
                raise ToolError("view_range takes two numbers: [first_line, last_line]", ToolCode.BAD_ARGUMENT)
            start, end = view_range
            end = len(lines) if end == -1 else end
            if start < 1 or end < start:
                raise ToolError(f"view_range {view_range} is not a valid range of lines", ToolCode.BAD_ARGUMENT)
            numbered = range(start, min(end, len(lines)) + 1)
        else:
            numbered = range(1, len(lines) + 1)
        return _cut(lines, numbered)

    def read_text(self, path: str) -> str:
        """The file's text as is (no line numbers), for backends that read files whole."""
        real = self.resolve(path)
        if not real.is_file():
            raise ToolError(
                self._missing(path, real) if not real.exists() else f"{path} is not a file", ToolCode.NOT_FOUND
            )
        try:
            text = real.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{path} is not UTF-8 text", ToolCode.NOT_TEXT) from exc
        self._trace(real)
        return text

    def create(self, path: str, file_text: str) -> str:
        real = self.resolve(path, write=True)
        if real.is_dir():
            raise ToolError(f"{path} is a folder", ToolCode.NOT_FOUND)
        real.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(real, file_text)
        return f"wrote {path} ({len(file_text)} characters)"

    def str_replace(self, path: str, old_str: str, new_str: str = "") -> str:
        real = self.resolve(path, write=True)
        text = self._existing(path, real)
        count = text.count(old_str) if old_str else 0
        if count == 0:
            raise ToolError(
                f"old_str was not found in {path}; view the file and copy the text exactly", ToolCode.NO_MATCH
            )
        if count > 1:
            raise ToolError(
                f"old_str occurs {count} times in {path}; include more context to make it unique", ToolCode.NO_MATCH
            )
        write_atomic(real, text.replace(old_str, new_str, 1))
        return f"edited {path}"

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        real = self.resolve(path, write=True)
        lines = self._existing(path, real).splitlines(keepends=True)
        if not 0 <= insert_line <= len(lines):
            raise ToolError(f"insert_line must be between 0 and {len(lines)} for {path}", ToolCode.BAD_ARGUMENT)
        if not insert_text.endswith("\n"):
            insert_text += "\n"
        lines.insert(insert_line, insert_text)
        write_atomic(real, "".join(lines))
        return f"inserted {counted(insert_text.count(chr(10)), 'line')} into {path} after line {insert_line}"

    def delete(self, path: str) -> str:
        real = self.resolve(path, write=True)
        if not real.is_file():
            raise ToolError(f"{path} is not a file", ToolCode.NOT_FOUND)
        real.unlink()
        return f"deleted {path}"

    def commit(self, message: str) -> str:
        if self.on_commit is None:
            raise ToolError("this agent has no commit tool", ToolCode.NO_TOOL)
        if not message or not message.strip():
            raise ToolError("a commit message is required", ToolCode.BAD_ARGUMENT)
        return self.on_commit(message)

    def _missing(self, path: str, real: Path) -> str:
        """'does not exist', saying where it was looked for, so a wrong base is plain to see."""
        if Path(path).is_absolute():
            return f"{path} does not exist"
        return f"{path} does not exist in {self.folder} (relative paths are taken from there; looked for {real})"

    def pool_log(self, limit: int = 20) -> str:
        if self.history is None:
            raise ToolError("this agent has no history tools", ToolCode.NO_TOOL)
        return self.history.log(limit)

    def pool_show(self, rev: str, path: str | None = None) -> str:
        if self.history is None:
            raise ToolError("this agent has no history tools", ToolCode.NO_TOOL)
        return self.history.show(rev, path or None)

    def _existing(self, path: str, real: Path) -> str:
        if not real.is_file():
            raise ToolError(f"{self._missing(path, real)}; use create", ToolCode.NOT_FOUND)
        self._trace(real)
        return real.read_text(encoding="utf-8")

    def run(self, name: str, args: dict) -> str:
        """Dispatch one tool call by name, as a model's tool_use block names it."""
        command = args.get("command", name)
        try:
            if command == "view":
                return self.view(args["path"], args.get("view_range"))
            if command == "create":
                return self.create(args["path"], args.get("file_text", ""))
            if command == "str_replace":
                return self.str_replace(args["path"], args["old_str"], args.get("new_str", ""))
            if command == "insert":
                return self.insert(
                    args["path"], int(args["insert_line"]), args.get("insert_text", args.get("new_str", ""))
                )
            if command == "delete":
                return self.delete(args["path"])
            if command == "commit":
                return self.commit(args.get("message", ""))
            if command == "pool_log":
                return self.pool_log(int(args.get("limit") or 20))
            if command == "pool_show":
                return self.pool_show(str(args["rev"]), args.get("path"))
        except KeyError as exc:
            raise ToolError(f"{command} needs the argument {exc.args[0]!r}", ToolCode.BAD_ARGUMENT) from exc
        raise ToolError(
            f"unknown command {command!r}; "
            "use view, create, str_replace, insert, delete, commit, pool_log or pool_show",
            ToolCode.BAD_ARGUMENT,
        )


def _cut(lines: list[str], numbered: range) -> str:
    """The numbered lines, cut at a line's end before MAX_VIEW_CHARS with a last line that says
    where and how to read on: a silent cut reads as the end of the file (a story without its
    later episodes)."""
    out: list[str] = []
    size = 0
    for n in numbered:
        line = f"{n:6}\t{lines[n - 1]}"
        if size + len(line) + 1 > MAX_VIEW_CHARS and out:
            return "\n".join(out) + "\n" + cut_marker(numbered.start, n - 1, len(lines))
        out.append(line[:MAX_VIEW_CHARS])
        size += len(line) + 1
    return "\n".join(out)


def cut_marker(first: int, last: int, total: int) -> str:
    return (
        f"[cut here: this view shows lines {first}-{last} of {total} ({MAX_VIEW_CHARS:,} characters at most "
        f"per view); read on with view_range [{last + 1}, -1]]"
    )


CUT = re.compile(r"^\[cut here: .* read on with view_range \[(\d+), -1\]\]$")


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


# Code points HFS+ ignores in names (git's own `is_hfs_dotgit` skips the same), so `.g\u200cit` is `.git` there.
_IGNORED = dict.fromkeys([*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])


def fold(name: str) -> str:
    """A name as a case-insensitive, normalising file system compares it: NFC, case-folded,
    without the code points HFS+ ignores and the trailing dots and spaces Windows drops."""
    return unicodedata.normalize("NFC", name.translate(_IGNORED)).casefold().rstrip(". ")


def is_git_name(part: str) -> bool:
    """True for `.git` and git's own files beside it (`.gitattributes`, `.gitmodules`, ...), however
    written (`.GIT`, `.Git.`, NTFS's short name `git~1`): git reads them, so no agent writes them."""
    folded = fold(part)
    return folded.startswith(".git") or folded == "git~1"


def _inside_folded(path: Path, root: Path) -> bool:
    parts, under = [fold(p) for p in path.parts], [fold(p) for p in root.parts]
    return parts[: len(under)] == under
