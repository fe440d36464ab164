"""Checking a work before training pays for it: `skilltui check`, and the same check `train` makes.

A work goes wrong in ways that cost a run late: an episode that is not Fountain (the loss
reads it as one long action), a file named so that it is not an episode at all, a story
made before an episode was added or edited (the writer retells the old one, the loss
compares with the new). So diffuse records a sha256 of each episode it read
(story.sources.json beside story.md), and the check compares them with the episodes as they
are now.

Problems stop training (one line each, exit 2, no run folder made); notes (a gap in the
numbering, a file that is ignored, a story made before diffuse kept a record) are said and
do not stop it: a story from an older skilltui still trains.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from ...core.durable import write_atomic
from ...core.formats import story_episodes
from .works import EPISODE_NAME, STORY_EPISODE, Work

SOURCES = "story.sources.json"


@dataclass
class Checked:
    """What the check found, and what it could tell of the story: "missing" before diffuse made
    story.md, a step still to come (import, check, diffuse) and not a problem, since the episodes
    are checked all the same; "current" when its record says it was made from the episodes as
    they are now; "unknown" when it has no record or was edited after diffuse."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    story: str = "unknown"


def sources_path(work: Work) -> Path:
    return work.root / SOURCES


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_story(work: Work, story: str) -> None:
    """Write story.md and the record of which episodes, as they were, it was made from."""
    write_atomic(work.story_path, story)
    record = {
        "story": _sha(story.encode("utf-8")),
        "episodes": {str(n): _sha(path.read_bytes()) for n, path in work.episodes.items()},
    }
    write_atomic(sources_path(work), json.dumps(record, indent=1) + "\n")


def check_work(work: Work) -> Checked:
    """Everything the check says of a loaded work: its problems and its notes."""
    checked = Checked()
    checked.notes += _ignored(work)
    checked.notes += _gaps(work)
    checked.problems += _unparsed(work)
    if not work.story_path.is_file():
        checked.story = "missing"
        return checked
    problems, notes = story_problems(work)
    checked.problems += problems
    checked.notes += notes
    record = _record(work)
    if record is not None and record.get("story") == _sha(work.story_path.read_bytes()):
        checked.story = "current"
    return checked


def story_problems(work: Work) -> tuple[list[str], list[str]]:
    """Whether story.md has a section for every episode and was made from the episodes as they are now."""
    again = f"run `skilltui diffuse --work {work.root}` again"
    try:
        story = work.story_path.read_bytes()
        text = story.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return [f"{work.story_path} cannot be read as UTF-8 text; {again}"], []
    if not STORY_EPISODE.search(text):
        return [f"{work.story_path} has no '## Episode N' sections for the writer to find; {again}"], []
    problems: list[str] = []
    sections = set(story_episodes(text))
    missing = [n for n in work.episodes if n not in sections]
    if missing:
        problems.append(f"{work.story_path} has no section for episode {_listed(missing)}; {again}")
    notes: list[str] = []
    extra = sorted(sections - set(work.episodes))
    if extra:
        # Not a problem: the writer reads only the sections of the episodes a step asks for.
        notes.append(f"{work.story_path} also retells episode {_listed(extra)}, which human/ does not have")
    record = _record(work)
    if record is None:
        return problems, notes + [
            f"{work.story_path} has no record of the episodes it was made from (an older diffuse); "
            f"{again} to let the check tell"
        ]
    if record.get("story") != _sha(story):
        return problems, notes + [
            f"{work.story_path} was changed after diffuse wrote it; the check cannot tell which episodes it retells"
        ]
    known = record.get("episodes", {})
    for n, path in work.episodes.items():
        if n in missing:
            continue
        if known.get(str(n)) != _sha(path.read_bytes()):
            problems.append(f"{path} changed since {work.story_path.name} was made from it; {again}")
    return problems, notes


def train_problems(work: Work) -> list[str]:
    """What stops `train` before it makes a run folder: episodes that do not parse, a story out of date."""
    return _unparsed(work) + story_problems(work)[0]


def _record(work: Work) -> dict | None:
    path = sources_path(work)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("episodes"), dict) else None


def _ignored(work: Work) -> list[str]:
    """Every file of human/ that is not an episode, named, so a misnamed episode is not silently left out."""
    notes = []
    for file in sorted(work.human_dir.iterdir()):
        if file.name.startswith(".") or EPISODE_NAME.match(file.name) and file.is_file():
            continue
        why = "a folder" if file.is_dir() else "not named like 01.fountain"
        notes.append(f"ignores {file} ({why}): episodes are human/NN.fountain")
    return notes


def _gaps(work: Work) -> list[str]:
    numbers = sorted(work.episodes)
    absent = [n for n in range(1, numbers[-1] + 1) if n not in work.episodes]
    if not absent:
        return []
    return [
        f"{work.human_dir} has no episode {_listed(absent)}: an epoch trains only the episodes before the first gap"
    ]


def _unparsed(work: Work) -> list[str]:
    """An episode in which screenplain finds no scene heading and no cue does not read as a screenplay."""
    from screenplain.parsers import fountain
    from screenplain.types import Dialog, DualDialog, Slug

    problems = []
    for path in work.episodes.values():
        elements = fountain.parse(io.StringIO(path.read_text(encoding="utf-8")))
        if not any(isinstance(e, Slug | Dialog | DualDialog) for e in elements):
            problems.append(
                f"{path} has no scene heading and no dialogue as Fountain reads it; "
                "write it as Fountain, or import the script with `skilltui import`"
            )
    return problems


def _listed(numbers: list[int]) -> str:
    return ", ".join(str(n) for n in numbers) if len(numbers) > 1 else str(numbers[0])
