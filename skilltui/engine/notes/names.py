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

Three shapes name a person without making them a speaker or a capitalised word mid-sentence,
so they are looked for on their own: a title and a surname (`MRS. HALVERSEN (60s) enters`,
`Mr. Quenby`, `Mrs Smith`: the title makes even a common surname a name), an introduction in
capitals with an age or a description after it (`OTTILIE (20s)`), and a name said to someone
in a line of dialogue (`Ottilie, the torch.`, `Thanks, Grace.`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from wordfreq import zipf_frequency

COMMON_ZIPF = 4.0  # Zipf frequency from which an English word is common (10 in a million words)
# Below this (one in a million words) a word opening a sentence of dialogue before a comma is a
# name said to someone ("Ottilie, the torch."), not an adverb or a verb ("Morally, ...": 3.6).
RARE_ZIPF = 3.0
TITLES = {
    "DR", "DOCTOR", "MR", "MRS", "MS", "MISS", "MX", "CAPTAIN", "CAPT", "DETECTIVE", "DET", "SERGEANT", "SGT",
    "INSPECTOR", "PROFESSOR", "PROF", "FATHER", "SISTER", "BROTHER", "AUNT", "UNCLE", "LADY", "LORD", "SIR",
    "NURSE", "OFFICER", "CHIEF", "JUDGE", "COLONEL", "MAJOR", "LIEUTENANT", "LT", "AGENT", "MADAME", "MONSIEUR",
}  # fmt: skip
# A capitalised word in running text, odd capitals included: O'Brien and O'brien, D'Arcy,
# McAllister and MacLeod, Jean-Luc, Rosie's (a contraction such as Can't or I've is no name).
NAME_WORD = r"(?:[DLO]'[A-Za-z][a-z]+|(?:Mc|Mac)[A-Z][a-z]+|[A-Z][a-z]+)(?:-[A-Za-z][a-z]*)*"
CAPITALISED = re.compile(rf"(?<![\w']){NAME_WORD}(?:'s)?(?![\w'])")
NAME_SHAPED = re.compile(r"[DLO]'[A-Za-z]|Mc[A-Za-z]|Mac[A-Z]")
CAPS_NAME_SHAPED = re.compile(r"(?<![\w'])(?:[DO]'[A-Z]{3,}|MC[A-Z]{3,})(?:'S)?(?![\w'])")
SENTENCE_START = re.compile(r"(?:[.!?:\"“‘(—]|--)\s*$")
ABBREVIATIONS = {"DR", "MR", "MRS", "MS", "MX", "CAPT", "DET", "SGT", "PROF", "LT"}
# An abbreviated title's full stop ends no sentence: the name after `Mrs.` or `DR.` is mid-sentence.
ABBREVIATED_TITLE = re.compile(rf"(?<![\w'])(?:{'|'.join(ABBREVIATIONS)})\.\s*$", re.IGNORECASE)
_CAPS_WORD = r"(?:[A-Z]'[A-Z]{2,}|(?:MC|MAC)[A-Z]{2,}|[A-Z][A-Z]+)(?:-[A-Z]+)*"


def _either_case(words: set[str]) -> str:
    return "|".join(sorted({form for t in words for form in (t, t.title())}, key=len, reverse=True))


# A title, then one name as a script or a reader writes it: MRS. HALVERSEN, Mr. Quenby, Mrs Smith
# (a full stop only after an abbreviation: "the Major. Then" is two sentences).
TITLED = re.compile(
    rf"(?<![\w'])(?:(?:{_either_case(ABBREVIATIONS)})\.?|{_either_case(TITLES - ABBREVIATIONS)})"
    rf"[ \t]+(?:{NAME_WORD}|{_CAPS_WORD})(?![\w'])"
)
# A character introduced in capitals, with an age or a description in brackets: OTTILIE (20s), shy.
INTRODUCED = re.compile(rf"(?<![\w'])({_CAPS_WORD}(?:[ \t]+{_CAPS_WORD}){{0,2}})[ \t]*\([^)\n]*[a-z0-9][^)\n]*\)")
# A name said to someone: opening a sentence of dialogue before a comma, or after a comma at the
# end of a clause ("Ottilie, the torch." "Fine. Brannagh, the ladder." "Thanks, Grace."); a word
# opening a list is no name ("Heel, fold, turn.").
ADDRESS_FIRST = re.compile(rf"(?:^|[.!?][ \t]+)({NAME_WORD})(?:,(?![ \t]*[\w']+,)|!|\?)")
ADDRESS_LAST = re.compile(rf",[ \t]+({NAME_WORD})(?=[.!?,;]|[ \t]*$)", re.MULTILINE)
# Words said to someone that are not names, though a script capitalises them after a comma.
ADDRESS_WORDS = {
    "God", "Jesus", "Christ", "Mum", "Mom", "Mummy", "Mommy", "Dad", "Daddy", "Mama", "Papa", "Ma", "Pa", "Gran",
    "Granny", "Grandma", "Grandpa", "Boss", "Darling", "Honey", "Love", "Man", "Mate", "Babe", "Baby", "Kid",
    "Son", "Folks", "Guys", "Everyone", "Everybody", "Ma'am", "Madam", "Okay", "Yes", "No", "Please",
}  # fmt: skip
# Interjections rare enough in writing to pass for names where a line opens on them ("Whoa, easy.").
INTERJECTIONS = {
    "shh", "psst", "whoa", "jeez", "oops", "ooh", "mmm", "gee", "ow", "ouch", "phew", "oi", "ahem", "yikes",
    "gosh", "golly", "dammit", "bah", "pfft", "tsk", "hah", "heh", "blimey", "crikey", "hmm", "ugh", "huh",
    "uh", "um", "aw", "yep", "nope", "eh", "er", "yo", "wow", "hey", "ah", "ha",
}  # fmt: skip


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
    if apostrophe and len(head) == 1 and len(tail) > 1:  # O'Brien, D'Arcy (not Rosie's); O'brien as typed
        forms.add(f"{head}'{tail[:1].upper()}{tail[1:]}")
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
    before = text[line_start:start]
    if ABBREVIATED_TITLE.search(before):
        return False
    return bool(SENTENCE_START.search(before)) or not before.strip()


def proper_nouns(text: str) -> set[str]:
    """Capitalised words not at a sentence start that are rare in English: people, places, ships.

    A surname of a name-only shape (O'Brien, O'brien, McAllister, Mcallister, MacLeod) is one
    wherever it stands and in capitals too: no English word opening a sentence looks like it."""
    text = fold(text)
    found = set()
    for m in CAPITALISED.finditer(text):
        word = m.group(0).removesuffix("'s")  # Rosa's is Rosa
        if common(word.replace("'", "")):
            continue
        if NAME_SHAPED.match(word) or not at_sentence_start(text, m.start()):
            found.add(word)
    found |= {m.group(0).removesuffix("'S") for m in CAPS_NAME_SHAPED.finditer(text)}
    return found


def titled_names(text: str) -> set[str]:
    """Every title with its surname (`MRS. HALVERSEN`, `Mr. Quenby`, `Mrs Smith`), however common the surname."""
    return {" ".join(m.group(0).split()) for m in TITLED.finditer(fold(text))}


def introduced_names(text: str) -> set[str]:
    """Names introduced in capitals with a bracket after them (`OTTILIE (20s)`), not a cue's extension."""
    found = set()
    for m in INTRODUCED.finditer(fold(text)):
        name = " ".join(m.group(1).split())
        # A scene heading or a transition in capitals is no introduction, nor a run of common words
        # in capitals (`THE DOOR (O.S.)` is a sound, not a person).
        if all(common(word) for word in name.split()) and len(name.split()) > 1:
            continue
        found.add(name)
    return found


def addressed_names(line: str, lower_words: set[str]) -> set[str]:
    """Names said to someone in one line of dialogue (`Ottilie, the torch.`, `Thanks, Grace.`).

    A rare word said to someone is a name. A common one is too after a comma (`Thanks, Grace.`),
    when the work never writes it in lower case (so `Listen, you` opening a line is no name, and
    `Rose` of `Thanks, Rose.` is one only if no rose grows anywhere in the work)."""
    line = fold(" ".join(line.split()))
    found = set()
    for m in ADDRESS_FIRST.finditer(line):
        word = m.group(1)
        rare = zipf_frequency(word.replace("'", "").lower(), "en") < RARE_ZIPF
        if rare and word.upper() not in TITLES and word.lower() not in INTERJECTIONS:
            found.add(word)
    for m in ADDRESS_LAST.finditer(line):
        word = m.group(1)
        if word.upper() in TITLES or word in ADDRESS_WORDS or word.lower() in INTERJECTIONS:
            continue
        if not common(word.replace("'", "")) or word.lower() not in lower_words:
            found.add(word)
    return found
