"""Damaged copies of a human episode, each a mistake a screenwriter would rank.

They work on the Fountain text itself (blank-line separated blocks), not through the
engine's parser, so the loss is tested against damage made independently of it.
"""

from __future__ import annotations

import io
import random
import re

from screenplain.parsers import fountain

from skilltui.engine.diffuse import noise_episode

HEADING = re.compile(r"^(?:INT|EXT|EST|INT\./EXT|INT/EXT|I/E)[. ]", re.IGNORECASE)


def blocks(text: str) -> list[str]:
    return [b.strip("\n") for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]


def scenes(text: str) -> list[list[str]]:
    """The episode's blocks grouped into scenes, each starting at its heading."""
    grouped: list[list[str]] = []
    for block in blocks(text):
        if HEADING.match(block) or not grouped:
            grouped.append([])
        grouped[-1].append(block)
    return grouped


def join(grouped: list[list[str]]) -> str:
    return "\n\n".join(b for scene in grouped for b in scene) + "\n"


def is_cue_block(block: str) -> bool:
    lines = block.split("\n")
    cue = lines[0].split("(")[0].strip()
    return len(lines) > 1 and cue.isupper() and any(c.isalpha() for c in cue) and not HEADING.match(block)


def drop_words(text: str, rate: float = 1 / 25, seed: int = 0) -> str:
    """One word in 25 of the whole episode dropped, from its action and dialogue: a small slip.

    Exactly round(words / 25) words go, at seeded random places, so every episode gets the
    same size of slip; headings, cues and parentheticals stay.
    """
    rng = random.Random(seed)
    lines = [block.split("\n") for block in blocks(text)]
    droppable = []
    for b, block in enumerate(lines):
        if HEADING.match(block[0]) or block[0].strip().endswith("TO:"):
            continue
        for k in range(1 if is_cue_block("\n".join(block)) else 0, len(block)):
            if not block[k].startswith("("):
                droppable += [(b, k, w) for w in range(len(block[k].split(" ")))]
    gone = set(rng.sample(droppable, min(len(droppable), round(len(text.split()) * rate))))
    out = []
    for b, block in enumerate(lines):
        kept_lines = []
        for k, line in enumerate(block):
            words = line.split(" ")
            kept = [w for i, w in enumerate(words) if (b, k, i) not in gone]
            kept_lines.append(" ".join(kept) if kept else words[0])
        out.append("\n".join(kept_lines))
    return "\n\n".join(out) + "\n"


def reverse_scenes(text: str) -> str:
    return join(list(reversed(scenes(text))))


def speakers(text: str) -> list[str]:
    found = []
    for block in blocks(text):
        if is_cue_block(block):
            name = block.split("\n")[0].split("(")[0].strip()
            if name not in found:
                found.append(name)
    return found


def swap_cues(text: str) -> str:
    """Every cue moved to another speaker of the episode (the next one in order of appearance)."""
    cast = speakers(text)
    assert len(cast) >= 2, "an episode needs two speakers to swap their lines"
    out = []
    for block in blocks(text):
        if is_cue_block(block):
            lines = block.split("\n")
            name = lines[0].split("(")[0].strip()
            lines[0] = lines[0].replace(name, cast[(cast.index(name) + 1) % len(cast)], 1)
            block = "\n".join(lines)
        out.append(block)
    return "\n\n".join(out) + "\n"


def cut_end(text: str, share: float = 0.4) -> str:
    """The last 40% of the scenes cut (at least one scene, rounding the cut up)."""
    grouped = scenes(text)
    keep = max(1, int(len(grouped) * (1 - share)))
    return join(grouped[:keep])


def twice(text: str) -> str:
    return text.rstrip("\n") + "\n\n" + text.lstrip("\n")


def prose(text: str) -> str:
    """A faithful prose retelling: nothing dropped, no Fountain structure left."""
    retold = noise_episode(text, random.Random(0), 0.0)
    assert not any(type(e).__name__ in ("Slug", "Dialog") for e in fountain.parse(io.StringIO(retold)))
    return retold
