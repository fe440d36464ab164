"""Damaged copies of a human episode, each a mistake a screenwriter would rank.

They work on the Fountain text itself (blank-line separated blocks), not through the
engine's parser, so the loss is tested against damage made independently of it.
"""

from __future__ import annotations

import io
import random
import re

from screenplain.parsers import fountain

from skilltui.engine.data.diffuse import noise_episode

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


def cue_name(block: str) -> str | None:
    """The character a dialogue block's cue names, as Fountain reads it; None for any other block.

    A cue is a line in capitals, or any name forced with `@` (`@McAllister`, the way Fountain
    cues a name in odd case); an extension (`(V.O.)`) and the dual-dialogue caret (`^`) are
    not part of the name.
    """
    lines = block.split("\n")
    if len(lines) < 2 or HEADING.match(block):
        return None
    cue = lines[0].split("(")[0].strip().removesuffix("^").strip()
    if cue.startswith("@"):
        return cue[1:].strip() or None
    return cue if cue.isupper() and any(c.isalpha() for c in cue) else None


def is_cue_block(block: str) -> bool:
    return cue_name(block) is not None


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
    """The episode's speaking characters in order of appearance, each as first written (one per name
    whatever its case: `@McAllister` and `MCALLISTER` are one character, as they are to Fountain)."""
    found: dict[str, str] = {}
    for block in blocks(text):
        name = cue_name(block)
        if name is not None:
            found.setdefault(name.upper(), name)
    return list(found.values())


def swap_cues(text: str) -> str:
    """Every cue moved to another speaker of the episode (the next one in order of appearance)."""
    cast = speakers(text)
    assert len(cast) >= 2, "an episode needs two speakers to swap their lines"
    order = [name.upper() for name in cast]
    out = []
    for block in blocks(text):
        name = cue_name(block)
        if name is not None:
            lines = block.split("\n")
            new = cast[(order.index(name.upper()) + 1) % len(cast)]
            rest = lines[0][lines[0].index(name) + len(name) :]  # its extension and caret stay
            lines[0] = ("" if new.isupper() else "@") + new + rest
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


# -- rewording, merging, swapping and cutting scenes -----------------------------------------

# Rules for rewording a line while keeping what it means: contractions either way, plain
# synonyms, fillers dropped, at most 30% of a line's words (at least one), so a paraphrase
# keeps 70-90% of the words as a careful rewrite does ("It's three in the morning, Mom" ->
# "It is three in the dawn, Mom").
CONTRACTIONS = {
    "it's": "it is",
    "you're": "you are",
    "don't": "do not",
    "i'm": "i am",
    "can't": "cannot",
    "won't": "will not",
    "doesn't": "does not",
    "isn't": "is not",
    "that's": "that is",
    "i'll": "i will",
    "we're": "we are",
    "you'd": "you would",
    "didn't": "did not",
    "hasn't": "has not",
    "haven't": "have not",
    "there's": "there is",
    "he's": "he is",
    "she's": "she is",
    "they're": "they are",
    "i've": "i have",
    "wasn't": "was not",
    "aren't": "are not",
    "let's": "let us",
    "what's": "what is",
    "i'd": "i would",
}
CONTRACTIONS |= {long: short for short, long in list(CONTRACTIONS.items())}
SYNONYMS = {
    "said": "told",
    "say": "tell",
    "big": "large",
    "little": "small",
    "small": "little",
    "quickly": "fast",
    "start": "begin",
    "begin": "start",
    "look": "see",
    "want": "wish",
    "need": "require",
    "help": "aid",
    "buy": "purchase",
    "house": "home",
    "nobody": "no one",
    "somebody": "someone",
    "everyone": "everybody",
    "maybe": "perhaps",
    "okay": "all right",
    "yes": "yeah",
    "whole": "entire",
    "street": "road",
    "coat": "jacket",
    "last": "final",
    "spare": "extra",
    "bucket": "pail",
    "wedding": "marriage",
    "borrowed": "lent",
    "car": "motor",
    "brother": "sibling",
    "mother": "mum",
    "remembers": "recalls",
    "ignores": "overlooks",
    "ruins": "spoils",
    "follows": "trails",
    "frightens": "scares",
    "wakes": "rouses",
    "blocks": "obstructs",
    "waits": "lingers",
    "honestly": "frankly",
    "listen": "hear me",
    "wait": "hold on",
    "fine": "all right",
    "close": "shut",
    "door": "doorway",
    "morning": "dawn",
    "night": "evening",
    "today": "this day",
    "decide": "choose",
    "keep": "hold",
    "going": "heading",
    "gone": "left",
    "feeding": "food",
    "father": "dad",
    "thought": "figured",
    "call": "ring",
    "phone": "telephone",
    "tell": "inform",
    "know": "realise",
    "think": "reckon",
    "come": "arrive",
    "came": "arrived",
    "asleep": "sleeping",
    "years": "winters",
    "weeks": "days",
    "again": "once more",
    "never": "not ever",
    "always": "forever",
    "stop": "quit",
    "leave": "go",
    "left": "went",
    "money": "cash",
    "work": "job",
    "sorry": "forgive me",
    "please": "kindly",
    "thanks": "thank you",
    "angry": "cross",
    "happy": "glad",
    "afraid": "scared",
    "right": "correct",
    "wrong": "mistaken",
    "hurry": "rush",
    "find": "locate",
}
FILLERS = {"well", "just", "really", "very", "oh", "look", "so", "actually"}


def _reword(line: str, share: float = 0.3) -> str:
    """The line with up to `share` of its words reworded (at least one), the rest as written."""
    words = line.split(" ")
    budget = max(1, round(len(words) * share))
    out = []
    for word in words:
        core = word.strip(".,!?;:\"'()—-")
        lower = core.lower()
        if budget and lower in FILLERS and out:
            budget -= 1
            continue
        new = CONTRACTIONS.get(lower) or SYNONYMS.get(lower)
        if budget and new and core:
            budget -= 1
            new = new.capitalize() if core[0].isupper() else new
            word = word.replace(core, new, 1)
        out.append(word)
    return " ".join(out)


def _dialogue_lines(block: str, change) -> str:
    """A cue block with every spoken line (not the cue, not a parenthetical) passed through `change`."""
    lines = block.split("\n")
    return "\n".join([lines[0], *(line if line.startswith("(") else change(line) for line in lines[1:])])


def paraphrase(text: str) -> str:
    """Every dialogue line reworded by rules (contractions, synonyms, fillers), its meaning kept."""
    return "\n\n".join(_dialogue_lines(b, _reword) if is_cue_block(b) else b for b in blocks(text)) + "\n"


def _middle(grouped: list[list[str]]) -> int:
    """The scene whose heading goes, or that moves: the middle one, never the first."""
    return max(1, len(grouped) // 2)


def delete_heading(text: str) -> str:
    """One scene heading deleted (the middle scene's): its content runs on from the scene before."""
    grouped = scenes(text)
    k = _middle(grouped)
    grouped[k] = [b for b in grouped[k] if not HEADING.match(b)]
    return join(grouped)


def delete_longest_scene(text: str) -> str:
    grouped = scenes(text)
    longest = max(range(len(grouped)), key=lambda k: (sum(len(b.split()) for b in grouped[k]), -k))
    return join(grouped[:longest] + grouped[longest + 1 :])


def swap_adjacent(text: str) -> str:
    """Two adjacent scenes swapped: the middle scene and the one before it."""
    grouped = scenes(text)
    k = _middle(grouped)
    grouped[k - 1], grouped[k] = grouped[k], grouped[k - 1]
    return join(grouped)


def reported_speech(text: str) -> str:
    """Every dialogue block turned into an action line that reports what was said."""
    out = []
    for block in blocks(text):
        if is_cue_block(block):
            lines = block.split("\n")
            name = str(cue_name(block)).title()
            said = " ".join(line for line in lines[1:] if not line.startswith("("))
            block = f'{name} says, "{said}"'
        out.append(block)
    return "\n\n".join(out) + "\n"


INVENTED = ["ZORAN", "PELAGIA", "QUILLON", "VESNA", "TOBIAH", "ORLA", "KASIMIR", "YSOLDE", "BARNABY", "IMOGEN"]


def rename_characters(text: str) -> str:
    """Every speaking character consistently renamed, in cues and wherever the text names them."""
    cast = speakers(text)
    fresh = [n for n in INVENTED if n not in text.upper()]
    names: dict[str, str] = {}
    for name, new in zip(cast, fresh, strict=False):  # a cue's last word is the name (MRS. HALE: HALE)
        names.setdefault(name.split()[-1].strip(".").upper(), new)

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        new = names[word.upper()]
        return new if word.isupper() else new.title()

    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b", re.I)
    return pattern.sub(swap, text)
