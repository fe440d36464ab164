"""A noisy offline writer (`--offline-noise P`): the same notes, a different script every pass.

A real model never writes the same script twice, so the validation loss of the same notes
varies from pass to pass; the gate has to tell a helpful update from that luck. The offline
writer is deterministic, which hides the problem. With noise, each paragraph of a written
episode is, with probability P, garbled the way a careless draft is: dropped, cut short, or
its character cue lost (the line then reads as action).

With `--offline-noise-call P` a whole writing call, with probability P, ignores the notes
it read and writes as it would with none: a real model's bad call (it skimmed the notes),
which moves every episode of that pass together. Paragraph noise alone moves episodes
independently, so only this one shows why the gate counts a call, not an episode, as one
sample (engine/validation/stats.py).

The draws come from a generator seeded by the call's identity: the run's name, where the
call writes inside the run and the episode. So a run is reproducible (the same command
writes the same scripts), while two passes over the same notes differ.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

HOW = ("drop", "cut", "cue")


def call_seed(out_dir: str, episode: int) -> str:
    """The run's name and the path inside it: the same on any machine, different for every call."""
    path = Path(out_dir)
    for parent in path.parents:
        if (parent / "config.json").exists():
            return f"{parent.name}/{path.relative_to(parent).as_posix()}#{episode}"
    return f"{path.as_posix()}#{episode}"


def ignores_notes(share: float, seed: str) -> bool:
    """Whether the writing call seeded by `seed` ignores its notes (its own generator: P=0 draws nothing)."""
    if share <= 0:
        return False
    return random.Random(hashlib.sha256(f"call:{seed}".encode()).digest()).random() < share


def garble(script: str, share: float, seed: str) -> str:
    """`script` with a share `share` of its paragraphs dropped, cut short or stripped of their cue."""
    if share <= 0:
        return script
    rng = random.Random(hashlib.sha256(seed.encode("utf-8")).digest())
    out: list[str] = []
    for block in script.strip("\n").split("\n\n"):
        if rng.random() >= share:
            out.append(block)
            continue
        how = rng.choice(HOW)
        lines = block.split("\n")
        if how == "drop":
            continue
        if how == "cue" and len(lines) > 1 and lines[0].isupper():
            out.append("\n".join(lines[1:]))
            continue
        words = block.split(" ")
        out.append(" ".join(words[: max(1, len(words) // 2)]))
    return "\n\n".join(out) + "\n"
