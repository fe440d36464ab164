"""The numeric loss: written episodes against the human ones, computed by the engine.

An agent judge writes the loss *report*; the number itself is computed here, so it is
the same for every backend, cannot be talked up, and lets curves from different runs be
compared. Four parts, each a similarity in [0, 1]:

- `chrf`: character n-gram F-score (sacrebleu's chrF) of the whole text: the words;
- `scenes`: how close the number of scene headings is: the shape;
- `speakers`: F1 of the sets of speaking characters: who is on screen;
- `dialogue`: how close the share of dialogue in the text is: the balance.

The loss is 1 minus their weighted mean, so it is in [0, 1] and lower is better.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from sacrebleu.metrics import CHRF
from screenplain.parsers import fountain
from screenplain.types import Dialog, DualDialog, Slug

WEIGHTS = {"chrf": 0.4, "scenes": 0.2, "speakers": 0.2, "dialogue": 0.2}
_CHRF = CHRF()


@dataclass(frozen=True)
class Shape:
    """What the parser sees in one episode."""

    scenes: int
    speakers: frozenset[str]
    dialogue_chars: int
    total_chars: int

    @property
    def dialogue_share(self) -> float:
        return self.dialogue_chars / self.total_chars if self.total_chars else 0.0


def shape(text: str) -> Shape:
    """Parse Fountain with screenplain and count what the loss compares."""
    scenes = 0
    speakers: set[str] = set()
    dialogue_chars = 0
    for element in fountain.parse(io.StringIO(text)):
        if isinstance(element, Slug):
            scenes += 1
        dialogs = [element.left, element.right] if isinstance(element, DualDialog) else [element]
        for dialog in dialogs:
            if isinstance(dialog, Dialog):
                speakers.add(_cue_name(str(dialog.character)))
                dialogue_chars += sum(len(str(line)) for parenthetical, line in dialog.blocks if not parenthetical)
    total = len("".join(text.split()))
    return Shape(scenes, frozenset(speakers), dialogue_chars, total)


def _cue_name(cue: str) -> str:
    return cue.split("(")[0].strip().upper()


def _closeness(a: float, b: float) -> float:
    top = max(abs(a), abs(b))
    return 1.0 if top == 0 else 1.0 - abs(a - b) / top


def _f1(written: frozenset[str], human: frozenset[str]) -> float:
    if not written and not human:
        return 1.0
    common = len(written & human)
    if common == 0:
        return 0.0
    precision, recall = common / len(written), common / len(human)
    return 2 * precision * recall / (precision + recall)


def score_episode(written: str | None, human: str) -> dict[str, float]:
    """The four similarities of one episode; a missing episode scores zero on every one."""
    if not written or not written.strip():
        return {name: 0.0 for name in WEIGHTS}
    w, h = shape(written), shape(human)
    return {
        "chrf": _CHRF.sentence_score(written, [human]).score / 100.0,
        "scenes": _closeness(w.scenes, h.scenes),
        "speakers": _f1(w.speakers, h.speakers),
        "dialogue": 1.0 - abs(w.dialogue_share - h.dialogue_share),
    }


def combine(scores: dict[str, float]) -> float:
    loss = 1.0 - sum(WEIGHTS[name] * scores[name] for name in WEIGHTS)
    return round(min(1.0, max(0.0, loss)), 4)


def score_step(written: dict[int, str | None], human: dict[int, str]) -> dict[str, object]:
    """Scores of a work-step: the mean of each part over its episodes, per episode and the loss."""
    per_episode = {n: score_episode(written.get(n), human[n]) for n in sorted(human)}
    mean = {name: round(sum(s[name] for s in per_episode.values()) / len(per_episode), 4) for name in WEIGHTS}
    human_shapes = {n: shape(human[n]) for n in human}
    written_shapes = {n: shape(t) if t else None for n, t in written.items()}
    return {
        "loss": combine(mean),
        "scores": mean,
        "episodes": {str(n): {k: round(v, 4) for k, v in s.items()} for n, s in per_episode.items()},
        "counts": {
            str(n): {
                "human_scenes": human_shapes[n].scenes,
                "written_scenes": ws.scenes if (ws := written_shapes.get(n)) else 0,
                "human_speakers": sorted(human_shapes[n].speakers),
                "written_speakers": sorted(ws.speakers) if ws else [],
                "human_dialogue_share": round(human_shapes[n].dialogue_share, 3),
                "written_dialogue_share": round(ws.dialogue_share, 3) if ws else 0.0,
            }
            for n in sorted(human)
        },
    }
