"""What the loss compares texts by: stemmed words, weighted by how much they say.

The loss (engine/loss/scores.py) must tell a scene that says the same thing in other words from
a scene that says something else. Exact n-grams cannot: "She walked to the door" and
"she walks to the door" share one bigram in four. So a text is read as a bag of word stems
(Snowball's English stemmer, compiled, from PyStemmer: `walked` and `walks` are both `walk`), each weighted by how
much it carries: a function word such as `the` or `you` weighs 0.1, a content word such as
`kitchen` 1.0, by its frequency in English (the `wordfreq` lists). Two texts are compared
by the weighted F-measure of the stems they share, plus a smaller share for the stem
bigrams they share, so phrasing counts a little and meaning most.

A `Vocab` is made per scoring call and dropped with it: nothing of one episode's words
stays in the trainer after its loss is computed.
"""

from __future__ import annotations

import math
import re
import unicodedata

import Stemmer
from wordfreq import zipf_frequency

# A word is letters (any script) with inner apostrophes; numbers count as words too.
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+")
# The weight of a stem from its word's Zipf frequency (log10 of uses per billion words):
# `the` and `you` (7+) weigh the floor, `call` (5.6) about half, `kitchen` (4.6) or a name
# (3 or less) the whole. Those bounds put pronouns, articles and auxiliaries at the floor
# and every word a reader would call content above 0.5.
COMMON_ZIPF, CONTENT_ZIPF, FLOOR = 7.0, 4.5, 0.1
BIGRAM_SHARE = 0.3  # of a scene's similarity: phrasing counts, meaning more

Bag = dict[object, float]  # stem (or stem pair) -> its weight times how often it occurs


def fold(text: str) -> str:
    """Lower case with accents dropped, so `Café` and `cafe` are one word."""
    text = text.lower()
    if text.isascii():  # most scripts: nothing to fold, and folding is a pass over every character
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("’", "'")


class Vocab:
    """Stems and weights of the words of one scoring call, each worked out once."""

    def __init__(self) -> None:
        # No cache of its own (`maxCacheSize` 0): `_known` is the one, and goes with this call.
        self._stemmer = Stemmer.Stemmer("english", 0)
        self._known: dict[str, tuple[str, float]] = {}

    def tokens(self, text: str) -> list[tuple[str, float]]:
        """(stem, weight) of every word of a text, in order."""
        known = self._known
        out = []
        for word in WORD.findall(fold(text)):
            hit = known.get(word)
            if hit is None:
                hit = known[word] = (self._stemmer.stemWord(word.replace("'", "")), _weight(word))
            out.append(hit)
        return out

    def bag(self, text: str, *, bigrams: bool) -> tuple[Bag, Bag]:
        """The text's weighted stems and (when asked) weighted stem bigrams."""
        tokens = self.tokens(text)
        uni: Bag = {}
        for stem, weight in tokens:
            uni[stem] = uni.get(stem, 0.0) + weight
        bi: Bag = {}
        if bigrams:
            for (a, wa), (b, wb) in zip(tokens, tokens[1:], strict=False):
                bi[(a, b)] = bi.get((a, b), 0.0) + (wa + wb) / 2
        return uni, bi


def read_word_frequencies() -> None:
    """Read wordfreq's English list now, rather than at the first word weighed (once a process).

    The scoring pool calls it before it forks its workers, so each starts with the list read.
    """
    zipf_frequency("the", "en")


def _weight(word: str) -> float:
    zipf = zipf_frequency(word, "en")
    return max(FLOOR, min(1.0, (COMMON_ZIPF - zipf) / (COMMON_ZIPF - CONTENT_ZIPF)))


def mass(bag: Bag) -> float:
    return sum(bag.values())


def overlap(a: Bag, b: Bag) -> float:
    # fsum: exact, so the same whatever order the set yields its keys (string hashing, and so
    # set order, differs from one process to the next, and the loss must not).
    return math.fsum([min(a[k], b[k]) for k in a.keys() & b.keys()])


def f_measure(a: Bag, b: Bag, mass_a: float | None = None, mass_b: float | None = None) -> float:
    """Weighted F1 of two bags: 1 for the same words in any number, 0 for none shared."""
    ma = mass(a) if mass_a is None else mass_a
    mb = mass(b) if mass_b is None else mass_b
    if ma <= 0 or mb <= 0:
        return 0.0
    shared = overlap(a, b)
    return 2 * shared / (ma + mb)


def merged(*bags: Bag) -> Bag:
    out: Bag = {}
    for bag in bags:
        for k, v in bag.items():
            out[k] = out.get(k, 0.0) + v
    return out


class Text:
    """A scene's (or a group of scenes') bags, with their masses kept for the comparisons."""

    __slots__ = ("uni", "bi", "uni_mass", "bi_mass")

    def __init__(self, uni: Bag, bi: Bag) -> None:
        self.uni, self.bi = uni, bi
        self.uni_mass, self.bi_mass = mass(uni), mass(bi)

    def __add__(self, other: Text) -> Text:
        return Text(merged(self.uni, other.uni), merged(self.bi, other.bi))

    def scaled(self, factor: float) -> Text:
        return Text({k: v * factor for k, v in self.uni.items()}, {k: v * factor for k, v in self.bi.items()})


def similarity(a: Text, b: Text) -> float:
    """How much two texts say alike, in [0, 1]: stems mostly, stem bigrams for phrasing."""
    uni = f_measure(a.uni, b.uni, a.uni_mass, b.uni_mass)
    if not a.bi_mass or not b.bi_mass:
        return uni
    return (1 - BIGRAM_SHARE) * uni + BIGRAM_SHARE * f_measure(a.bi, b.bi, a.bi_mass, b.bi_mass)
