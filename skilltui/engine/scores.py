"""The numeric loss: written episodes against the human ones, computed by the engine.

An agent judge writes the loss *report*; the number itself is computed here, so it is
the same for every backend, cannot be talked up, and lets curves from different runs be
compared. It is meant to rank scripts the way a screenwriter would: a faithful script near
0; scenes out of order, lines in the wrong mouths, a script cut short or padded out each
clearly worse than a small slip; another episode of the same show worse still.

Both scripts are parsed with screenplain into scenes (a scene heading and what follows it).
Every written scene is compared with every human one by sentence BLEU (sacrebleu) of their
text, less what two different scenes of the human episode share by chance, and they are
matched one to one, best pairs first. Five parts, each a similarity in [0, 1]:

- `scenes` (0.50): the human scenes the written ones cover, in order: the similarity of the
  matched pairs on the heaviest chain that runs in the human order, summed, over the larger
  of the two scene counts. A missing scene, an extra scene and a scene out of order each
  cost a whole scene's share.
- `order` (0.10): the share of pairs of matched scenes that come in the human order
  (Kendall's concordance). Scenes in reverse order score 0, however many there are.
- `dialogue` (0.30): what each character says, scene by scene: in every matched pair of
  scenes, each speaker's lines against the same speaker's human lines, weighted by how much
  they say; dialogue in unmatched scenes counts as missing or extra. A line given to the
  wrong speaker counts for neither.
- `length` (0.05): 1 - |log2(written words / human words)|, floored at 0: half as long and
  twice as long cost the same, and either costs the whole part.
- `format` (0.05): scene headings, character cues and the share of dialogue, each by how
  close its count or share is to the human episode's.

The loss is 1 minus their weighted mean, so it is in [0, 1] and lower is better. The
README's loss section says why these weights; tests/test_loss_table.py holds the ranking.

    skilltui score --human human/01.fountain --written draft.fountain
"""

from __future__ import annotations

import io
import math
from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from sacrebleu.metrics import BLEU
from sacrebleu.metrics.helpers import extract_all_word_ngrams
from screenplain.parsers import fountain
from screenplain.types import Action, Dialog, DualDialog, Slug, Transition

WEIGHTS = {"scenes": 0.50, "order": 0.10, "dialogue": 0.30, "length": 0.05, "format": 0.05}
_BLEU = BLEU(effective_order=True)
_ORDER = _BLEU.max_ngram_order
# sacrebleu's tokenizers keep every line they ever tokenized (`lru_cache(maxsize=2**16)` on
# `__call__`, shared by the class): here a line is a whole scene, so the trainer kept every
# scene it had scored, both texts, for up to 65,536 scenes (~40 kB a step on the bench).
_TOKENIZER_CACHES = [
    call.cache_clear
    for call in (type(_BLEU.tokenizer).__call__, type(getattr(_BLEU.tokenizer, "_post_tokenizer", None)).__call__)
    if hasattr(call, "cache_clear")
]


@dataclass(frozen=True)
class Scene:
    """One scene: its heading, its whole text (speakers attached to their lines) and its lines."""

    heading: str
    text: str
    lines: tuple[tuple[str, str], ...]  # (speaker, what they say), in order

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
    heading, parts, lines = "", [], []
    headings = cues = dialogue_chars = 0

    def close() -> None:
        if heading or parts:
            scenes.append(Scene(heading, "\n".join(parts), tuple(lines)))

    for element in fountain.parse(io.StringIO(text)):
        if isinstance(element, Slug):
            close()
            heading, parts, lines = str(element.line).strip(), [str(element.line).strip()], []
            headings += 1
        elif isinstance(element, Action | Transition):
            parts.extend(str(line) for line in element.lines)
        else:
            dialogs = [element.left, element.right] if isinstance(element, DualDialog) else [element]
            for dialog in (d for d in dialogs if isinstance(d, Dialog)):
                cues += 1
                speaker = _cue_name(str(dialog.character))
                spoken = " ".join(str(line).strip() for parenthetical, line in dialog.blocks if not parenthetical)
                dialogue_chars += len("".join(spoken.split()))
                lines.append((speaker, spoken))
                parts.extend(f"{speaker}: {line}" for _, line in dialog.blocks)
    close()
    return Script(tuple(scenes), headings, cues, len(text.split()), dialogue_chars, len("".join(text.split())))


def _cue_name(cue: str) -> str:
    """The character a cue names: extensions such as (V.O.) and (CONT'D) dropped."""
    return cue.split("(")[0].strip().lstrip("@").upper()


def similarity(written: str, human: str) -> float:
    """Sentence BLEU (sacrebleu, effective order) in [0, 1]: word n-grams that carry over.

    BLEU rather than chrF because two unrelated scenes of one show share characters, names
    and common words, which chrF scores near 0.3 and BLEU near 0: a wrong scene must count
    as wrong for the ranking to hold. Equal to `BLEU(effective_order=True).sentence_score`.
    """
    return _bleu(_grams(written), _grams(human))


Grams = tuple[Counter, int]  # every word n-gram of a text (orders 1 to 4) with its count, and its length


def _grams(text: str) -> Grams:
    """A text's n-grams. Every written scene meets every human one, so `match_scenes` extracts
    each scene's once per scoring; nothing is kept past it (a cache across steps grew the
    process by a megabyte a step and would hold every episode of a long training set), not
    even by the tokenizer."""
    tokens = _BLEU.tokenizer(text.rstrip())
    for clear in _TOKENIZER_CACHES:
        clear()
    return extract_all_word_ngrams(tokens, 1, _ORDER)


def _bleu(hyp: Grams, ref: Grams) -> float:
    (hyp_grams, hyp_len), (ref_grams, ref_len) = hyp, ref
    if not hyp_len or not ref_len:  # an empty (or all-space) text shares nothing
        return 0.0
    correct, total = [0] * _ORDER, [0] * _ORDER
    for gram, count in hyp_grams.items():
        total[len(gram) - 1] += count
        if gram in ref_grams:
            correct[len(gram) - 1] += min(count, ref_grams[gram])
    score = BLEU.compute_bleu(correct, total, hyp_len, ref_len, smooth_method="exp", effective_order=True)
    return score.score / 100.0


def _closeness(a: float, b: float) -> float:
    top = max(abs(a), abs(b))
    return 1.0 if top == 0 else 1.0 - abs(a - b) / top


def chance_similarity(human: Script, grams: list[Grams] | None = None) -> float:
    """What two different scenes of this human episode share on average: names, stock words.

    A written scene is credited only for what it shares beyond that, so a scene of another
    episode, which shares no more than any two scenes do, counts for nothing. Capped at 0.5:
    an episode whose scenes are mostly alike has no chance level worth the name.
    """
    scenes = human.scenes
    if len(scenes) < 2:
        return 0.0
    grams = grams if grams is not None else [_grams(scene.text) for scene in scenes]
    pairs = [_bleu(a, b) for i, a in enumerate(grams) for j, b in enumerate(grams) if i != j]
    return min(0.5, sum(pairs) / len(pairs))


def match_scenes(written: Script, human: Script) -> list[tuple[int, int, float]]:
    """Pairs (human scene, written scene, similarity above chance), one to one, best pairs first.

    Ties go to the earlier written scene, so a script written twice matches its first copy.
    """
    human_grams = [_grams(h.text) for h in human.scenes]
    written_grams = [_grams(w.text) for w in written.scenes]
    chance = chance_similarity(human, human_grams)
    pairs = sorted(
        (
            (max(0.0, (_bleu(w, h) - chance) / (1.0 - chance)), i, j)
            for i, h in enumerate(human_grams)
            for j, w in enumerate(written_grams)
        ),
        key=lambda p: (-p[0], p[2], p[1]),
    )
    used_h: set[int] = set()
    used_w: set[int] = set()
    matched = []
    for sim, i, j in pairs:
        if sim > 0 and i not in used_h and j not in used_w:
            used_h.add(i)
            used_w.add(j)
            matched.append((i, j, sim))
    return sorted(matched, key=lambda p: p[1])


def _order(matched: list[tuple[int, int, float]]) -> float:
    """Share of pairs of matched scenes in the human order; 1 when fewer than two scenes match."""
    pairs = list(combinations(matched, 2))  # matched is sorted by written position
    if not pairs:
        return 1.0
    return sum(1 for a, b in pairs if a[0] < b[0]) / len(pairs)


def in_order(matched: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """The heaviest chain of matched scenes that runs in the human order (weighted LIS)."""
    best: list[tuple[float, list[tuple[int, int, float]]]] = []
    for k, pair in enumerate(matched):
        chains = [best[m] for m in range(k) if matched[m][0] < pair[0]]
        weight, chain = max(chains, key=lambda c: c[0], default=(0.0, []))
        best.append((weight + pair[2], [*chain, pair]))
    return max(best, key=lambda c: c[0], default=(0.0, []))[1]


def _dialogue(written: Script, human: Script, matched: list[tuple[int, int, float]]) -> float:
    """What each character says, compared within matched scenes, weighted by how much is said."""
    total = weighted = 0.0
    seen_h = {i for i, _, _ in matched}
    seen_w = {j for _, j, _ in matched}
    for i, j, _ in matched:
        h_said, w_said = human.scenes[i].said(), written.scenes[j].said()
        for speaker in h_said.keys() | w_said.keys():
            h, w = h_said.get(speaker, ""), w_said.get(speaker, "")
            weight = max(len(h), len(w))
            total += weight
            weighted += weight * similarity(w, h)
    # Dialogue in scenes that found no partner is all missing (human) or all extra (written).
    total += sum(len(line) for i, s in enumerate(human.scenes) if i not in seen_h for _, line in s.lines)
    total += sum(len(line) for j, s in enumerate(written.scenes) if j not in seen_w for _, line in s.lines)
    return 1.0 if total == 0 else weighted / total


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


def compare(written: Script, human: Script) -> tuple[dict[str, float], list[tuple[int, int, float]]]:
    """The five similarities of one parsed episode against its human one, and the scene matching."""
    matched = match_scenes(written, human)
    largest = max(len(written.scenes), len(human.scenes))
    return {
        "scenes": sum(sim for _, _, sim in in_order(matched)) / largest if largest else 1.0,
        "order": _order(matched),
        "dialogue": _dialogue(written, human, matched),
        "length": _length(written, human),
        "format": _format(written, human),
    }, matched


def score_episode(written: str | None, human: str) -> dict[str, float]:
    """The five similarities of one episode; a missing episode scores zero on every one."""
    if not written or not written.strip():
        return {name: 0.0 for name in WEIGHTS}
    return compare(parse(written), parse(human))[0]


def combine(scores: dict[str, float]) -> float:
    loss = 1.0 - sum(WEIGHTS[name] * scores[name] for name in WEIGHTS)
    return round(min(1.0, max(0.0, loss)), 4)


def score_step(written: dict[int, str | None], human: dict[int, str]) -> dict[str, object]:
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


def _counts(w: Script, h: Script, matched: list[tuple[int, int, float]]) -> dict[str, object]:
    """What a judge or a person needs to see why the parts came out as they did."""
    in_order = sum(1 for a, b in combinations(matched, 2) if a[0] < b[0])
    return {
        "human_scenes": len(h.scenes),
        "written_scenes": len(w.scenes),
        "matched_scenes": [[i + 1, j + 1, round(sim, 3)] for i, j, sim in matched],
        "scene_pairs_in_order": f"{in_order}/{len(matched) * (len(matched) - 1) // 2}",
        "human_speakers": sorted(h.speakers),
        "written_speakers": sorted(w.speakers),
        "human_words": h.words,
        "written_words": w.words,
        "human_dialogue_share": round(h.dialogue_share, 3),
        "written_dialogue_share": round(w.dialogue_share, 3),
    }
