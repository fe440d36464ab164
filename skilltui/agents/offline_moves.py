"""The craft moves the offline backend knows, and the scores its reports carry.

The writer (agents/offline.py) uses a move only when a note it opened teaches it, and the
backward pass (agents/offline_backward.py) writes the note for the move behind the weakest
score; both read the moves and the scores from here, so neither imports the other's module
to get them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..core.formats import FOLDERS


@dataclass(frozen=True)
class Move:
    """One craft move: the note that teaches it, the words that show a note teaches it, the score it helps."""

    name: str
    path: str
    description: str
    body: str
    cues: tuple[str, ...]
    helps: str


MOVES: tuple[Move, ...] = (
    Move(
        "dialogue",
        "dialogue/dialogue-blocks.md",
        "Turn reported speech into dialogue blocks: the speaker's cue in capitals, the line below it.",
        "When the story says that someone says something, write it as dialogue: the character cue\n"
        "on its own line in capitals (MARA), and the spoken line on the next line. Never leave a\n"
        "spoken line inside an action paragraph.",
        ("character cue", "dialogue"),
        "dialogue",
    ),
    Move(
        "scene",
        "scene/scene-headings.md",
        "Open every scene with a scene heading: INT. or EXT., the place in capitals, the time of day.",
        "Where the story says where a scene is, write a scene heading line such as\n"
        "INT. KITCHEN - NIGHT or EXT. HARBOUR - DAWN: inside is INT., outside is EXT., the place\n"
        "in capitals, then a dash and the time of day.",
        ("scene heading", "int."),
        "scenes",
    ),
    Move(
        "parenthetical",
        "dialogue/parentheticals.md",
        "Keep how a line is said as a short parenthetical under the cue, in lower case.",
        "When the story says how a line is spoken (quietly, to herself), keep it as a parenthetical\n"
        "on its own line between the character cue and the line: (quietly).",
        ("parenthetical",),
        "dialogue",
    ),
    Move(
        "transition",
        "scene/transitions.md",
        "Mark a hard cut between scenes with the transition CUT TO: on its own line.",
        "Where the story says the picture cuts away, write the transition CUT TO: on its own line,\n"
        "in capitals, with a blank line before and after.",
        ("transition", "cut to"),
        "scenes",
    ),
    Move(
        "economy",
        "action/action-economy.md",
        "Action lines say what is seen, now: no 'then', 'meanwhile' or 'after a moment' openers.",
        "Write action in the present tense and start with what is seen. Drop connective openers\n"
        "such as Then, Meanwhile and After a moment: the cut does that work.",
        ("action", "meanwhile"),
        "scenes",
    ),
)
MOVES_FOR_SCORE = {
    "scenes": ("scene", "transition", "economy"),
    "order": ("scene", "transition"),
    "dialogue": ("dialogue", "parenthetical"),
    "speakers": ("dialogue",),
    "length": ("economy", "parenthetical"),
    "format": ("scene", "dialogue", "transition"),
}
assert all(m.path.split("/")[0] in FOLDERS for m in MOVES)


def report_scores(text: str) -> dict[str, float]:
    """The scores a judge's or commonality report carries in its `<!-- scores: {...} -->` line; none if unreadable."""
    match = re.search(r"<!-- scores: (\{.*?\}) -->", text)
    if not match:
        return {}
    try:
        return {k: float(v) for k, v in json.loads(match.group(1)).items()}
    except (ValueError, TypeError):
        return {}
