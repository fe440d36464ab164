"""A damaged pool repository, told apart from one that holds nothing yet, and named in one line.

A pool whose HEAD does not resolve is never taken for one an init killed before its first
commit: removing its `.git` to start over would lose every commit and kept ref. Only a
`.git` with no object and no ref in it (nothing to lose) counts as "not made yet".
Anything else that cannot be read (HEAD naming a branch that is not there, a ref file cut
short or filled with NULs by a power cut, a garbage `.git/HEAD`, an object that cannot be
read) is damage: the command stops with one line naming it and the ways on (`git fsck`,
`skilltui repair RUN`), exit code 2, and nothing is deleted.

The diagnosis reads the ref files itself rather than parsing GitPython's messages, so the
line says which file is wrong and how.
"""

from __future__ import annotations

import re
from pathlib import Path

import git

from ..core.errors import PoolDamaged

SHA = re.compile(rb"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
# How git and GitPython word an object that cannot be read (an emptied or cut loose object, a bad pack).
OBJECT_DAMAGE = (
    "is empty",
    "is corrupt",
    "corrupt loose object",
    "unable to read",
    "unable to unpack",
    "inflate",
    "bad object",
    "invalid object",
    "could not be resolved, git returned",
    "bad tree object",
    "not a valid object",
    "unable to parse",
    "broken link",
    "missing blob",
    "missing tree",
)


def never_committed(git_dir: Path) -> bool:
    """True when `git_dir` holds no object and no ref: an init that died before its first commit."""
    objects = git_dir / "objects"
    if objects.is_dir():
        for entry in objects.iterdir():
            if entry.name == "info":
                continue
            if entry.is_dir() and any(entry.iterdir()):
                return False
    refs = git_dir / "refs"
    if refs.is_dir() and any(p.is_file() for p in refs.rglob("*")):
        return False
    packed = git_dir / "packed-refs"
    return not (packed.is_file() and packed.read_bytes().strip(b"# \n").strip())


def read_ref(git_dir: Path, name: str) -> bytes | None:
    """A ref's stored value, loose or packed (raw bytes, as a power cut may have left them), or None."""
    loose = git_dir / name
    if loose.is_file():
        return loose.read_bytes()
    packed = git_dir / "packed-refs"
    if packed.is_file():
        for line in packed.read_bytes().splitlines():
            sha, _, ref = line.partition(b" ")
            if ref.strip() == name.encode():
                return sha
    return None


def head_problem(git_dir: Path) -> str | None:
    """What is wrong with HEAD and the ref it names, in words; None when both look whole."""
    head_file = git_dir / "HEAD"
    if not head_file.is_file():
        return ".git/HEAD is missing"
    raw = head_file.read_bytes()
    if raw.startswith(b"ref: "):
        name = raw[5:].strip().decode("utf-8", errors="replace")
        value = read_ref(git_dir, name)
        if value is None:
            return f"HEAD names the branch {name}, which does not exist (an orphan checkout or a deleted branch)"
        if not value.strip():
            return f".git/{name} is empty"
        if SHA.match(value.strip()) is None:
            return f".git/{name} does not hold a commit id (cut short or NUL bytes, as a power cut leaves it)"
        return None
    if SHA.match(raw.strip()) is None:
        return ".git/HEAD holds neither a branch nor a commit id"
    return None


def damage_line(root: Path, what: str) -> str:
    """The one line a damaged pool ends a command with: what is wrong, that nothing was deleted, the ways on."""
    line = f"the pool's repository is damaged: {what}; nothing was deleted. See the damage with `git -C {root} fsck`"
    if (root.parent / "config.json").is_file():
        line += f", or run `skilltui repair {root.parent}` to point main at the newest intact commit the run recorded"
    return line


def damaged(root: Path, what: str) -> PoolDamaged:
    return PoolDamaged(damage_line(root, what))


def damage_of(exc: BaseException) -> str | None:
    """The line of git's (or GitPython's) error that says an object cannot be read, or None when
    `exc` is not about damage. Follows the cause chain: the error may arrive wrapped."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, PoolDamaged):
            return str(seen)
        if isinstance(seen, git.GitCommandError):
            text = str(seen.stderr or seen)
        elif isinstance(seen, (ValueError, git.BadObject, git.BadName)):
            text = str(seen)
        else:
            text = ""
        for line in text.splitlines():
            cleaned = line.strip().removeprefix("stderr:").strip(" '")
            if any(words in cleaned for words in OBJECT_DAMAGE):
                return cleaned
        seen = seen.__cause__ or seen.__context__
    return None


def object_damage(root: Path, exc: BaseException) -> PoolDamaged | None:
    """`exc` as a PoolDamaged naming the pool at `root`, when it is about an unreadable object."""
    if isinstance(exc, PoolDamaged):
        return exc
    found = damage_of(exc)
    return damaged(root, f"an object cannot be read ({found})") if found else None
