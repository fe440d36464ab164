"""The numeric loss: written episodes against the human ones, computed by the engine.

An agent judge writes the loss *report*; the number itself is computed here, so it is
the same for every backend, cannot be talked up, and lets curves from different runs be
compared. It is meant to rank scripts the way a screenwriter would: a faithful script near
0; scenes out of order, lines in the wrong mouths, a script cut short or padded out each
clearly worse than a small slip or a reworded line; another episode of the same show worse
still.

Both scripts are parsed with screenplain into scenes (a scene heading and what follows it).
Texts are compared by content (engine/loss/scene_text.py: stems, content words weighing more
than function words), less what two different scenes of the human episode share by
chance; scenes are matched one to one, a merged or split scene matching both of its parts
(engine/loss/scene_match.py). Six parts, each a similarity in [0, 1]:

- `scenes` (0.43): the human scenes the written ones cover, in order: what the matched
  scenes on the heaviest chain that runs in the human order are worth, over the larger of
  the two scene counts. A missing, extra or misplaced scene each cost a scene's share; a
  missing heading costs a quarter of one.
- `order` (0.10): the share of pairs of human scenes that the script plays in the human
  order, each pair by how surely both scenes are played (a faint match counts in part); a
  pair with a scene the script lacks is not in order. Reversed scenes score 0.
- `dialogue` (0.10): the wording of the lines: each human line against the written line of
  the matched scene that says the same thing (beyond what two lines of the episode share by
  chance), weighted by how much it says; lines with no partner count as missing or extra.
- `speakers` (0.27): who says them: the same pairs of lines, counted only when the written
  line has the human line's speaker.
- `length` (0.05): 1 - |log2(written words / human words)|, floored at 0.
- `format` (0.05): scene headings, character cues and the share of dialogue, each by how
  close its count or share is to the human episode's.

The loss is 1 minus their weighted sum, so it is in [0, 1] and lower is better. The
docs/loss.md says why these weights; tests/test_loss_table.py holds the ranking.

    skilltui score --human human/01.fountain --written draft.fountain
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from screenplain.parsers import fountain
from screenplain.types import Action, Dialog, DualDialog, Slug, Transition

from .scene_match import Group, align_lines, chance, in_order, match, pairs_in_order
from .scene_text import Text, Vocab

WEIGHTS = {"scenes": 0.43, "order": 0.10, "dialogue": 0.10, "speakers": 0.27, "length": 0.05, "format": 0.05}
# In a scene's text for matching, what is said weighs half what is seen: a scene is found by
# where it is, what happens and who is in it; its wording is the `dialogue` part's to judge.
SPOKEN_SHARE = 0.5
FULL_LINE = 0.35  # a line this alike above chance counts whole for its speaker; a weaker one in part


@dataclass(frozen=True)
class Scene:
    """One scene: its heading, its whole text (speakers attached to their lines) and its lines."""

    heading: str
    text: str
    lines: tuple[tuple[str, str], ...]  # (speaker, what they say), in order
    staged: str = ""  # what is seen and who speaks: the heading, the action and the cues

    def said(self) -> dict[str, str]:
        """Each speaker's lines in this scene, joined."""
        by_speaker: dict[str, list[str]] = {}
        for speaker, line in self.lines:
            by_speaker.setdefault(speaker, []).append(line)
        return {speaker: " ".join(lines) for speaker, lines in by_speaker.items()}


@dataclass(frozen=True)
class Script:
    """What the parser sees in one episode."""

    scenes: tuple[Scene, ...]
    headings: int
    cues: int
    words: int
    dialogue_chars: int
    total_chars: int

    @property
    def speakers(self) -> frozenset[str]:
        return frozenset(speaker for scene in self.scenes for speaker, _ in scene.lines)

    @property
    def dialogue_share(self) -> float:
        return self.dialogue_chars / self.total_chars if self.total_chars else 0.0


def parse(text: str) -> Script:
    """Parse Fountain with screenplain into scenes; text before the first heading is a scene of its own."""
    scenes: list[Scene] = []
    heading = ""
    parts: list[str] = []
    lines: list[tuple[str, str]] = []  # (speaker, what they say)
    staged: list[str] = []
    headings = cues = dialogue_chars = 0

    def close() -> None:
        if heading or parts:
            scenes.append(Scene(heading, "\n".join(parts), tuple(lines), "\n".join(staged)))

    for element in fountain.parse(io.StringIO(text)):
        if isinstance(element, Slug):
            close()
            heading, parts, lines = str(element.line).strip(), [str(element.line).strip()], []
            staged = [heading]
            headings += 1
        elif isinstance(element, Action | Transition):
            parts.extend(str(line) for line in element.lines)
            staged.extend(str(line) for line in element.lines)
        else:
            dialogs = [element.left, element.right] if isinstance(element, DualDialog) else [element]
            for dialog in (d for d in dialogs if isinstance(d, Dialog)):
                cues += 1
                speaker = _cue_name(str(dialog.character))
                spoken = " ".join(str(line).strip() for parenthetical, line in dialog.blocks if not parenthetical)
                dialogue_chars += len("".join(spoken.split()))
                lines.append((speaker, spoken))
                staged.append(speaker)
                parts.extend(f"{speaker}: {line}" for _, line in dialog.blocks)
    close()
    return Script(tuple(scenes), headings, cues, len(text.split()), dialogue_chars, len("".join(text.split())))


def _cue_name(cue: str) -> str:
    """The character a cue names: extensions such as (V.O.) and (CONT'D) dropped."""
    return cue.split("(")[0].strip().lstrip("@").upper()


@dataclass
class _Read:
    """A parsed script with its texts' bags, made once per scoring."""

    script: Script
    scenes: list[Text]
    lines: list[list[tuple[str, Text]]]  # per scene: (speaker, what they say)

    @classmethod
    def of(cls, script: Script, vocab: Vocab) -> _Read:
        lines = [[(who, Text(*vocab.bag(said, bigrams=False))) for who, said in s.lines] for s in script.scenes]
        scenes = [
            Text(*vocab.bag(s.staged, bigrams=True))
            + Text(*vocab.bag("\n".join(said for _, said in s.lines), bigrams=True)).scaled(SPOKEN_SHARE)
            for s in script.scenes
        ]
        return cls(script, scenes, lines)


def _closeness(a: float, b: float) -> float:
    top = max(abs(a), abs(b))
    return 1.0 if top == 0 else 1.0 - abs(a - b) / top


def _lines(written: _Read, human: _Read, groups: list[Group]) -> tuple[float, float]:
    """The `dialogue` and `speakers` parts: every human line with the written line saying the same thing."""
    total = worded = spoken = 0.0
    # What two different lines of the human episode share by chance (a show's stock phrases
    # and names): a line is credited only beyond it, as a scene is.
    level = chance([t for ls in human.lines for _, t in ls])
    paired_h: set[tuple[int, int]] = set()
    paired_w: set[tuple[int, int]] = set()
    for g in groups:
        h_lines = [(i, k, *line) for i in g.human for k, line in enumerate(human.lines[i])]
        w_lines = [(j, m, *line) for j in g.written for m, line in enumerate(written.lines[j])]
        for a, b, sim in align_lines([t for *_, t in h_lines], [t for *_, t in w_lines], level):
            hi, hk, h_who, h_text = h_lines[a]
            wj, wm, w_who, w_text = w_lines[b]
            paired_h.add((hi, hk))
            paired_w.add((wj, wm))
            weight = max(h_text.uni_mass, w_text.uni_mass)
            total += weight
            worded += weight * sim
            if h_who == w_who:
                spoken += weight * min(1.0, sim / FULL_LINE)
    # Lines with no partner, in matched scenes or not, are all missing (human) or all extra (written).
    for side, seen in ((human, paired_h), (written, paired_w)):
        total += sum(t.uni_mass for i, ls in enumerate(side.lines) for k, (_, t) in enumerate(ls) if (i, k) not in seen)
    return (1.0, 1.0) if total == 0 else (worded / total, spoken / total)


def _length(written: Script, human: Script) -> float:
    if not written.words or not human.words:
        return 1.0 if written.words == human.words else 0.0
    return max(0.0, 1.0 - abs(math.log2(written.words / human.words)))


def _format(written: Script, human: Script) -> float:
    return (
        _closeness(written.headings, human.headings)
        + _closeness(written.cues, human.cues)
        + 1.0
        - abs(written.dialogue_share - human.dialogue_share)
    ) / 3


def compare(written: Script, human: Script) -> tuple[dict[str, float], list[Group]]:
    """The six similarities of one parsed episode against its human one, and the scene groups."""
    vocab = Vocab()
    w, h = _Read.of(written, vocab), _Read.of(human, vocab)
    groups = match(w.scenes, h.scenes)
    largest = max(len(written.scenes), len(human.scenes))
    n = len(human.scenes)
    dialogue, speakers = _lines(w, h, groups)
    return {
        "scenes": sum(g.credit for g in in_order(groups)) / largest if largest else 1.0,
        "order": pairs_in_order(groups) / (n * (n - 1) // 2) if n >= 2 else float(bool(groups)),
        "dialogue": dialogue,
        "speakers": speakers,
        "length": _length(written, human),
        "format": _format(written, human),
    }, groups


def score_episode(written: str | None, human: str) -> dict[str, float]:
    """The six similarities of one episode; a missing episode scores zero on every one."""
    if not written or not written.strip():
        return {name: 0.0 for name in WEIGHTS}
    return compare(parse(written), parse(human))[0]


def combine(scores: dict[str, float]) -> float:
    loss = 1.0 - sum(WEIGHTS[name] * scores[name] for name in WEIGHTS)
    return round(min(1.0, max(0.0, loss)), 4)


class StepScores(TypedDict):
    """A work-step's scores as score_step gives them (the loss stage adds the judge's fields)."""

    loss: float
    scores: dict[str, float]  # each part's mean over the episodes
    episodes: dict[str, dict[str, float]]  # each episode's parts, by episode number
    counts: dict[str, dict[str, object]]  # what the parts were computed from, by episode number


def score_step(written: Mapping[int, str | None], human: Mapping[int, str]) -> StepScores:
    """Scores of a work-step: the mean of each part over its episodes, per episode, counts and the loss."""
    per_episode: dict[int, dict[str, float]] = {}
    counts: dict[str, dict[str, object]] = {}
    for n in sorted(human):
        h = parse(human[n])
        text = written.get(n)
        if text and text.strip():
            w = parse(text)
            parts, matched = compare(w, h)
        else:
            w, parts, matched = parse(""), {name: 0.0 for name in WEIGHTS}, []
        per_episode[n] = parts
        counts[str(n)] = _counts(w, h, matched)
    mean = {name: round(sum(s[name] for s in per_episode.values()) / len(per_episode), 4) for name in WEIGHTS}
    return {
        "loss": combine(mean),
        "scores": mean,
        "episodes": {str(n): {k: round(v, 4) for k, v in s.items()} for n, s in per_episode.items()},
        "counts": counts,
    }


def pairs_text(in_order: float, pairs: int) -> str:
    """`2 of 3`, or `1.4 of 3` when faint matches count in part: read as a count, not as `1.0/3`."""
    value = f"{in_order:.1f}".removesuffix(".0")
    return f"{value} of {pairs}"


def _counts(w: Script, h: Script, groups: list[Group]) -> dict[str, object]:
    """What a judge or a person needs to see why the parts came out as they did."""
    n = len(h.scenes)
    return {
        "human_scenes": n,
        "written_scenes": len(w.scenes),
        "matched_scenes": [[i + 1, j + 1, round(g.sim, 3)] for g in groups for i in g.human for j in g.written],
        "scene_pairs_in_order": pairs_text(pairs_in_order(groups), n * (n - 1) // 2),
        "human_speakers": sorted(h.speakers),
        "written_speakers": sorted(w.speakers),
        "human_words": h.words,
        "written_words": w.words,
        "human_dialogue_share": round(h.dialogue_share, 3),
        "written_dialogue_share": round(w.dialogue_share, 3),
    }
