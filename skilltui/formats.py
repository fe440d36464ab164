"""The shapes of the two text files the engine and the agents both read: a note and a story.

A note lives in one of a fixed set of folders, opens with a one-line `description` in YAML
front matter and has one body heading; a story holds each episode's retelling under its own
`## Episode N` heading. The engine writes and checks these files (engine/pool.py,
engine/diffuse.py) and the offline backend reads and writes them too (agents/offline.py).
They live here, outside both packages, because the agents never import the engine: a
backend is a player the engine calls, and this layering is checked by import-linter
(pyproject.toml).
"""

from __future__ import annotations

import re

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
