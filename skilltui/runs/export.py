"""Export a trained pool as an Agent Skill, so any agent that reads skills can use it directly.

An Agent Skill (https://agentskills.io/specification) is a folder holding a `SKILL.md`:
YAML front matter with a `name` (lowercase letters, digits and single hyphens, at most 64
characters, the same as the folder's name) and a `description` (what the skill does and
when to use it, at most 1024 characters), then a markdown body the agent reads when the
skill applies. The pool's notes go beside it in their folders, and the body indexes them
with each note's one-line description: the same headers-first, bodies-on-demand reading
the writer agent does in training.

The notes are read from a commit (HEAD by default), never from the working tree, so an
export during training is exactly one point of the pool's history. Nothing is written on
refusal, and the folder is built beside the target and renamed into place, so a failure
never leaves half an export behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..core.durable import write_atomic
from ..core.errors import UsageError
from ..core.signals import raising_signals
from ..core.words import counted
from ..pool.notes import FOLDERS, NOTE_NAME, parse_note
from ..store.run_folder import Run, run_containing

MAX_NAME = 64
MAX_DESCRIPTION = 1024
FALLBACK_NAME = "screenwriting-craft-notes"


@dataclass(frozen=True)
class Exported:
    folder: Path
    name: str
    commit: str
    notes: int
    warning: str | None


def skill_name(folder: Path) -> str:
    """A valid skill name from the folder's name: lowercase, hyphens for anything else, no double hyphens."""
    slug = re.sub(r"[^a-z0-9]+", "-", folder.name.lower()).strip("-")[:MAX_NAME].strip("-")
    return slug or FALLBACK_NAME


def notes_at(run: Run, commit: str) -> dict[str, bytes]:
    """Every note of the pool at `commit`: markdown files directly inside one of the note folders."""
    tree = run.pool.repo.commit(commit).tree
    notes: dict[str, bytes] = {}
    for folder in FOLDERS:
        try:
            sub = tree / folder
        except KeyError:
            continue
        for blob in getattr(sub, "blobs", []):
            if NOTE_NAME.match(blob.name):
                notes[f"{folder}/{blob.name}"] = blob.data_stream.read()
    return dict(sorted(notes.items()))


# What each note folder is about, as the description names it.
TOPICS = {
    "structure": "episode structure",
    "scene": "scene headings and transitions",
    "dialogue": "dialogue",
    "character": "characters",
    "action": "action lines",
}


def _note_description(data: bytes) -> str:
    """A note's one-line description; empty for a note that has none or is malformed."""
    meta, _, problem = parse_note(data.decode("utf-8", errors="replace"))
    return str(meta.get("description", "")).strip() if meta and not problem else ""


def describe(notes: dict[str, bytes]) -> str:
    """The skill's description, from the notes actually exported and nothing else.

    It names the topics of the folders that hold a note (a folder whose notes were all
    rolled back is not advertised), says when to use the skill, then quotes as many of the
    notes' own one-line descriptions as fit in the 1024 characters. The training works are
    not named: they mean nothing to an agent that reads the skill.
    """
    folders = [folder for folder in FOLDERS if any(rel.startswith(f"{folder}/") for rel in notes)]
    topics = [TOPICS.get(folder, folder) for folder in folders]
    listed = ", ".join(topics[:-1]) + f" and {topics[-1]}" if len(topics) > 1 else "".join(topics) or "screenwriting"
    text = (
        f"Craft notes for writing screenplay episodes in Fountain, on {listed}. Use when writing, adapting "
        "or revising screenplay episodes in Fountain, or when checking a script against these notes."
    )
    quoted = ""
    for description in filter(None, (_note_description(data).rstrip(".") for data in notes.values())):
        more = f"{quoted}; {description}" if quoted else f" The notes: {description}"
        if len(text) + len(more) + 1 > MAX_DESCRIPTION:
            break
        quoted = more
    return (text + (quoted + "." if quoted else ""))[:MAX_DESCRIPTION]


def render_skill(name: str, description: str, run: Run, commit: str, notes: dict[str, bytes]) -> str:
    """The SKILL.md text: front matter, how to use the notes, and an index of them by folder."""
    front = yaml.safe_dump(
        {
            "name": name,
            "description": description,
            "metadata": {"source": "skilltui", "run": run.id, "commit": commit},
        },
        sort_keys=False,
        allow_unicode=True,
        width=10_000,
    )
    lines = [
        "---",
        front.rstrip("\n"),
        "---",
        "# Screenwriting craft notes",
        "",
        f"{counted(len(notes), 'short note')} learned by training (run `{run.id}`, pool commit `{commit[:10]}`). "
        "Each note says in one line when it applies. Read the index, open only the notes that fit "
        "the scene or problem at hand, and follow their guidance while writing.",
        "",
    ]
    for folder, about in FOLDERS.items():
        rows = [(rel, data) for rel, data in notes.items() if rel.startswith(f"{folder}/")]
        if not rows:
            continue
        lines += [f"## {folder}: {about}", ""]
        for rel, data in rows:
            description = _note_description(data)
            lines.append(f"- [{rel}]({rel})" + (f": {description}" if description else ""))
        lines.append("")
    return "\n".join(lines)


def _holds_a_run(resolved: Path, depth: int = 3) -> Path | None:
    """A run folder under `resolved` (looked for a few levels down), which --force must not wipe."""
    base = len(resolved.parts)
    for dirpath, dirnames, filenames in os.walk(resolved):
        if "config.json" in filenames and "memory" in dirnames:
            return Path(dirpath)
        if len(Path(dirpath).parts) - base >= depth:
            dirnames[:] = []
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    return None


def _check_target(target: Path, run: Run, force: bool) -> None:
    """Refuse before writing anything: a file in the way, a folder with content, or a folder that must never go."""
    if target.exists() and not target.is_dir():
        raise UsageError(f"--to {target} is a file; pass a folder for the skill")
    resolved = target.resolve()
    inside = run_containing(resolved)
    if inside is not None:
        raise UsageError(f"--to {target} is inside run {inside.name} ({inside}); export to a folder outside every run")
    if not target.is_dir() or not any(target.iterdir()):
        return
    if not force:
        raise UsageError(f"--to {target} is not empty; pass --force to replace it, or choose a new folder")
    protected = [run.root.resolve(), Path.cwd().resolve(), Path.home().resolve()]
    if any(resolved == p or resolved in p.parents for p in protected) or resolved == Path(resolved.anchor):
        raise UsageError(f"--to {target} holds the run, the current folder or your home; --force will not replace it")
    if (resolved / ".git").exists():
        raise UsageError(f"--to {target} is a git repository; --force will not replace it, choose a new folder")
    holds = _holds_a_run(resolved)
    if holds is not None:
        raise UsageError(f"--to {target} holds run {holds.name}; --force will not replace it, choose a new folder")
    if not (resolved / "SKILL.md").is_file():
        # --force is for exporting again over an earlier export; a folder with no SKILL.md is someone's files.
        raise UsageError(
            f"--to {target} has no SKILL.md, so it is no earlier export; --force replaces only an export: "
            "choose a new folder, or empty this one yourself"
        )


def export_skill(run: Run, target: Path, commit: str | None = None, force: bool = False) -> Exported:
    """Write the pool at `commit` (default HEAD) as an Agent Skill folder at `target`."""
    pool = run.pool
    rev = commit or "HEAD"
    sha = pool.resolve(rev)
    if sha is None:
        raise UsageError(
            f"--commit {rev} is not a commit of run {run.id}'s pool; `skilltui review {run.root}` lists them"
        )
    notes = notes_at(run, sha)
    if not notes:
        raise UsageError(f"the pool of run {run.id} has no notes at {sha[:10]}; there is nothing to export")
    target = Path(target).expanduser()
    _check_target(target, run, force)
    name = skill_name(target.absolute())
    warning = None
    if name != target.absolute().name:
        shown = target.absolute().name
        warning = f"skill clients expect the folder to be named like the skill; rename {shown!r} to {name!r}"
    # A symlinked skill folder (a dotfiles setup) is kept: the skill is written where it points.
    if target.is_symlink():
        target = target.resolve()
    text = render_skill(name, describe(notes), run, sha, notes)

    # A stop signal in here raises, so the staging folder is removed on the way out.
    with raising_signals():
        target = _write(target.absolute(), text, notes)
    return Exported(folder=target, name=name, commit=sha, notes=len(notes), warning=warning)


def _write(target: Path, text: str, notes: dict[str, bytes]) -> Path:
    """Build the skill beside `target` and rename it into place (or fill the current folder)."""
    if target.is_dir() and target.resolve() in (Path.cwd().resolve(), *Path.cwd().resolve().parents):
        # The current folder (empty, or _check_target refused) cannot be renamed over; fill it instead.
        _fill_in_place(target, text, notes)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    old: Path | None = None
    try:
        (staging / "SKILL.md").write_text(text, encoding="utf-8")
        for rel, data in notes.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_bytes(data)
        os.chmod(staging, 0o755)
        if target.exists():
            # Move the old folder aside first, so the swap is two renames and a failure between them
            # is undone below rather than leaving no skill at all.
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.rmdir(old)
            os.rename(target, old)
        try:
            os.rename(staging, target)
        except OSError:
            if old is not None:
                os.rename(old, target)
                old = None
            raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        if old.is_symlink():
            old.unlink()
        else:
            shutil.rmtree(old, ignore_errors=True)
    return target


def _fill_in_place(target: Path, text: str, notes: dict[str, bytes]) -> None:
    """Write the skill into an empty folder that cannot be swapped (the current one).

    Each file goes through a temporary name and a rename; on a failure every file written
    so far is removed again, so the folder is left empty as it was found.
    """
    written: list[Path] = []
    try:
        for rel, data in [("SKILL.md", text.encode("utf-8")), *notes.items()]:
            path = target / rel
            if not path.parent.exists():
                path.parent.mkdir(parents=True)
                written.append(path.parent)
            write_atomic(path, data)
            written.append(path)
    except BaseException:
        for path in reversed(written):
            with contextlib.suppress(OSError):
                path.rmdir() if path.is_dir() else path.unlink()
        raise
