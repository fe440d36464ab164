"""Names as readers write them: the forms the leakage guard looks for in a note.

A script writes a name one way (`O'BRIEN`, `DR. NOVAK`, `HÉLÈNE`, `.THE LANTERN HOUSE`); a
note that leaks it writes it another (`O'Brien` or `O’Brien`, `Novak` or `Dr Novak`,
`Helene`, `the Lantern House`). So each name found in a training work gives every form a
reader would write: in capitals and title case (keeping `O'Brien` and `McKee` capitalised
inside), without its title (`DR.`, `MRS.`, `CAPTAIN`: the surname alone when it is not a
common word), without a leading "The". Notes and names are compared with accents folded
and apostrophes straightened, case kept, so `Béatrice` is `Beatrice` but `kit` is not `Kit`.

Which words are common comes from the `wordfreq` package's English frequency lists (they
ship in its wheel): a word of Zipf frequency 4 or more (ten uses in a million words or
more: `kit`, `rose`, `tide`, `ruth`) is an ordinary word that can also be a name, and counts
as one only where a name is unmistakable (see leakage.py); `novak` (3.4) or `okafor` (2.6)
are names wherever they stand.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from wordfreq import zipf_frequency

COMMON_ZIPF = 4.0  # Zipf frequency from which an English word is common (10 in a million words)
TITLES = {
    "DR", "DOCTOR", "MR", "MRS", "MS", "MISS", "MX", "CAPTAIN", "CAPT", "DETECTIVE", "DET", "SERGEANT", "SGT",
    "INSPECTOR", "PROFESSOR", "PROF", "FATHER", "SISTER", "BROTHER", "AUNT", "UNCLE", "LADY", "LORD", "SIR",
    "NURSE", "OFFICER", "CHIEF", "JUDGE", "COLONEL", "MAJOR", "LIEUTENANT", "LT", "AGENT", "MADAME", "MONSIEUR",
}  # fmt: skip
# A capitalised word in running text: letters, inner apostrophes and hyphens (O'Brien, Jean-Luc).
CAPITALISED = re.compile(r"(?<![\w'])[A-Z][a-z]+(?:['-][A-Za-z][a-z]*)*(?![\w'])")
SENTENCE_START = re.compile(r"(?:[.!?:\"“‘(—]|--)\s*$")


def fold_char(c: str) -> str:
    if c in "’‘ʼ":
        return "'"
    if c.isascii():
        return c
    base = "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))
    return base if len(base) == 1 else c


def fold(text: str) -> str:
    """Accents dropped and apostrophes straightened, one character for one, so positions stay."""
    return text if text.isascii() else "".join(fold_char(c) for c in text)


@lru_cache(maxsize=4096)
def common(word: str) -> bool:
    """An ordinary English word (that may also be a name): `kit`, `will`, `rose`, `harbour`."""
    return zipf_frequency(word.lower(), "en") >= COMMON_ZIPF


def _word_title(word: str) -> set[str]:
    """A word in title case the ways people write it: O'Brien, McKee and Mckee, MacLeod and Macleod, Jean-Luc."""
    plain = "-".join(p[:1].upper() + p[1:].lower() for p in word.split("-"))
    forms = {plain}
    head, apostrophe, tail = plain.partition("'")
    if apostrophe and len(head) == 1 and len(tail) > 1:  # O'Brien, D'Arcy (not Rosie's)
        forms = {f"{head}'{tail[:1].upper()}{tail[1:]}"}
    for prefix in ("Mc", "Mac"):
        if plain.startswith(prefix) and len(plain) > len(prefix) + 2:
            forms.add(prefix + plain[len(prefix)].upper() + plain[len(prefix) + 1 :])
    return forms


def title_forms(name: str) -> set[str]:
    """Every title-case writing of a name, word by word."""
    forms = {""}
    for word in name.split():
        forms = {f"{f} {t}".strip() for f in forms for t in _word_title(word)}
    return forms


def variants(name: str) -> set[str]:
    """A name as written and as readers write it: without a title, without a leading The."""
    words = fold(" ".join(name.split())).split()
    found = {" ".join(words)}
    if len(words) > 1 and words[0].upper() == "THE":
        found.add(" ".join(words[1:]))
    if len(words) > 1 and words[0].upper().rstrip(".") in TITLES:
        title, rest = words[0].rstrip("."), words[1:]
        found |= {" ".join([title, *rest]), " ".join([title + ".", *rest])}
        if len(rest) > 1 or not common(rest[0]):  # the surname alone, when it is distinctive
            found.add(" ".join(rest))
    forms: set[str] = set()
    for v in found:
        forms |= {v, v.upper(), *title_forms(v)}
    return {f for f in forms if len(f) >= 2 and any(c.isalpha() for c in f)}


def at_sentence_start(text: str, start: int) -> bool:
    """Whether a word at `start` opens a sentence (or a line), where any word is capitalised."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(SENTENCE_START.search(text[line_start:start])) or not text[line_start:start].strip()


def proper_nouns(text: str) -> set[str]:
    """Capitalised words not at a sentence start that are rare in English: people, places, ships."""
    text = fold(text)
    found = set()
    for m in CAPITALISED.finditer(text):
        word = m.group(0).removesuffix("'s")  # Rosa's is Rosa
        if not at_sentence_start(text, m.start()) and not common(word.replace("'", "")):
            found.add(word)
    return found
