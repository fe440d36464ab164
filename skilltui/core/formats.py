"""The shapes of the two text files the engine and the agents both read: a note and a story.

A note lives in one of a fixed set of folders, opens with a one-line `description` in YAML
front matter and has one body heading; a story holds each episode's retelling under its own
`## Episode N` heading. The engine writes and checks these files (pool/notes.py,
engine/data/diffuse.py), the offline backend reads and writes them too (agents/offline.py), and
the apps read notes to show them (the Pool pane, the note view). They live here, outside
all three, because the agents never import the engine (a backend is a player the engine
calls) and the apps reach the engine only through the run model: both layerings are
checked by import-linter (pyproject.toml).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

# -- a note --------------------------------------------------------------------------------

FOLDERS: dict[str, str] = {
    "structure": "how an episode is shaped: scenes, order, openings and endings",
    "scene": "scene headings, locations, time of day, transitions between scenes",
    "dialogue": "who speaks, how lines are set out, parentheticals",
    "character": "consistency of names, voices and who is present",
    "action": "action lines: what is seen, economy, present tense",
}
BODY_HEADING = "## Guidance"
MAX_DESCRIPTION_CHARS = 160
MAX_BODY_CHARS = 1500
MAX_LINES = 40


def render_note(description: str, body: str) -> str:
    """A well-formed note from its parts: what every writer of notes should produce."""
    line = yaml.safe_dump(description, width=10_000).strip().removesuffix("...").strip()
    return f"---\ndescription: {line}\n---\n{BODY_HEADING}\n\n{body.strip()}\n"


try:  # the C loader: a big pool is many tiny documents (docs/benchmarks.md, "Start-up")
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


def parse_note(text: str) -> tuple[dict | None, str, str | None]:
    """Split a note into (front matter, body, problem). `problem` is None for a well-formed note.

    A note saved by an editor that adds a byte order mark or Windows line endings is told
    so, not accepted: notes go into prompts and diffs byte for byte, so they keep one form,
    and both faults are invisible in the editor that made them ("does not start with ---"
    of a file that visibly does was a riddle to a person and to the backward agent alike).
    """
    if text.startswith("\ufeff"):
        return None, text, "starts with a byte order mark (U+FEFF) before its --- line; save it as UTF-8 without BOM"
    if text.startswith("---\r\n"):
        return None, text, "has Windows line endings (CRLF); save it with Unix line endings (LF)"
    if not text.startswith("---\n"):
        return None, text, "does not start with a --- front matter line"
    end = text.find("\n---\n", 3)
    if end < 0:
        return None, text, "front matter is not closed by a --- line"
    front = text[4:end]
    lenient = _description_line(front)
    if lenient is not None:
        return {"description": lenient}, text[end + 5 :], None
    try:
        meta = yaml.load(front, Loader=_Loader)
    except yaml.YAMLError as exc:
        return None, text, f"front matter is not valid YAML ({str(exc).splitlines()[0]})"
    if not isinstance(meta, dict):
        return None, text, "front matter must be a mapping with a description"
    return meta, text[end + 5 :], None


def _description_line(front: str) -> str | None:
    """The description of a front matter that is just one `description:` line, read as written.

    The prompts and the docs show a plain line (`description: Open with a heading: INT.
    or EXT.`), which strict YAML rejects for its second colon, or cuts at a ` #`. A single
    description line is read leniently, the way a person reads it: everything after the
    key, unquoted only when it is one quoted YAML scalar. Anything else goes to YAML.
    """
    lines = [line for line in front.splitlines() if line.strip()]
    if len(lines) != 1 or not lines[0].startswith("description:"):
        return None
    value = lines[0][len("description:") :].strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        try:
            quoted = yaml.load(value, Loader=_Loader)
        except yaml.YAMLError:
            return value
        return quoted if isinstance(quoted, str) else value
    return value


def note_paths(root: Path) -> list[str]:
    """The notes of a pool folder (relative paths, sorted): the `.md` files directly in its folders.

    Not a link (its lines could come from anywhere, a human episode included: the headers go
    into the writer's prompt) and not a name that is not UTF-8 (no record could hold it); the
    linter names both.
    """
    paths: list[str] = []
    for folder in FOLDERS:
        directory = Path(root) / folder
        if not directory.is_dir():
            continue
        with os.scandir(directory) as entries:
            paths.extend(
                f"{folder}/{e.name}"
                for e in entries
                if e.is_file(follow_symlinks=False) and e.name.endswith(".md") and _utf8(e.name)
            )
    return sorted(paths)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class NoteHeaders:
    """(path, description) of every note of a pool folder, cached by file stat so a big pool costs stats, not reads.

    The engine's prompts and the live app's Pool pane both list the headers; each keeps
    its own cache, so neither shares state with the other's thread.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._cache: dict[str, tuple[int, int, str]] = {}

    def read(self) -> list[tuple[str, str]]:
        result: list[tuple[str, str]] = []
        fresh: dict[str, tuple[int, int, str]] = {}
        root = str(self.root)
        for rel in note_paths(self.root):
            full = os.path.join(root, rel)
            st = os.stat(full)
            cached = self._cache.get(rel)
            if cached and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
                description = cached[2]
            else:
                with open(full, encoding="utf-8", errors="replace") as f:
                    meta, _, problem = parse_note(f.read())
                description = str(meta.get("description", "")).strip() if meta and not problem else ""
            fresh[rel] = (st.st_mtime_ns, st.st_size, description)
            result.append((rel, description))
        self._cache = fresh
        return result


# -- a story -------------------------------------------------------------------------------

EPISODE_HEADING = re.compile(r"^## Episode (\d+)\s*$", re.MULTILINE)


def story_episodes(story: str) -> dict[int, str]:
    """Split a story into its episodes by their `## Episode N` headings."""
    marks = list(EPISODE_HEADING.finditer(story))
    episodes: dict[int, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(story)
        episodes[int(mark.group(1))] = story[mark.end() : end].strip()
    return episodes
