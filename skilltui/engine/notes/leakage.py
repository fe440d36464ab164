"""The leakage guard: a note must teach craft, never the answers of the training works.

A writer that reads a note naming a training work's characters, its scene-heading places
or its title, or copying its lines, is being handed the targets (target leakage): the loss
falls while nothing that transfers to a new show was learned. So the linter is given the
run's training works and rejects a note that

- names a speaking character (a cue in a human episode), a scene-heading location, a
  work's title (from work.toml, the episodes' title page, or the folder's name), or a
  person, place or ship the action and dialogue name (a capitalised word that is not at a
  sentence start and is rare in English), written the way a script or a reader writes
  them (engine/notes/names.py: `O'BRIEN` as `O'Brien` or `O’Brien`, `DR. NOVAK` as `Novak`,
  `HÉLÈNE` as `Helene`, `.THE LANTERN HOUSE` as `the Lantern House`);
- shares a run of `MIN_RUN` (8) or more words with a human episode.

A lower-case common word (`a kitchen`) is no leak. Nor is a common English word that is
also a name where it reads as the word: `Kit each character out with a prop` opens a
sentence; `KIT` in capitals or `Kit` mid-sentence is the character.

A problem names what leaked and the work it came from, quoting only the offending words,
so the agent can replace them with an invented example.

Run it by hand: `skilltui lint POOL --work DIR ...`.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from screenplain.parsers import fountain
from screenplain.types import Action, Dialog, DualDialog, Slug

from ..data.works import Work
from .names import (
    addressed_names,
    at_sentence_start,
    common,
    fold,
    introduced_names,
    proper_nouns,
    titled_names,
    variants,
)

MIN_RUN = 8
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
TITLE_PAGE_KEY = re.compile(r"\A[A-Za-z][A-Za-z ]*:")
TITLE_PAGE_TITLE = re.compile(r"^title:[ \t]*(.*(?:\n[ \t]+\S.*)*)", re.IGNORECASE | re.MULTILINE)
SLUG_PREFIX = re.compile(r"^(?:INT\./EXT\.|EXT\./INT\.|INT/EXT|I/E|INT\.?|EXT\.?|EST\.?)\s+", re.IGNORECASE)


class Leak(str):
    """A problem that is a leak (a training work's name or lines in a note), told apart by its type.

    The commit tool refuses a leak with its own tool error code (`ToolCode.LEAK`), so an agent
    that reacts to leaks (the offline backward agent) needs no match on the message.
    """


@dataclass
class Lexicon:
    """What the training works would give away: their names, places, titles and word runs."""

    # term (as written in a note) -> (what it is, work)
    terms: dict[str, tuple[str, str]] = field(default_factory=dict)
    # hash of MIN_RUN lower-case words -> (work, episode)
    runs: dict[int, tuple[str, int]] = field(default_factory=dict)
    works: list[str] = field(default_factory=list)
    _pattern: re.Pattern[str] | None = field(default=None, repr=False)
    _signature: int | None = field(default=None, repr=False)

    @property
    def signature(self) -> int:
        """Tells one lexicon's contents from another's (caches of checked notes key on it)."""
        if self._signature is None:
            self._signature = hash((tuple(sorted(self.terms.items())), len(self.runs), tuple(self.works)))
        return self._signature

    @classmethod
    def from_works(cls, works: list[Work]) -> Lexicon:
        lexicon = cls()
        for work in sorted(works, key=lambda w: w.name):
            lexicon.add_work(work)
        return lexicon

    def add_work(self, work: Work) -> None:
        self.works.append(work.name)
        texts = {n: path.read_text(encoding="utf-8", errors="replace") for n, path in work.episodes.items()}
        # The title as the work calls itself, as its episodes' title pages do, and (what the
        # prompts call a work without one) its folder's name.
        titles = [work.meta.get("title", ""), _title_case(work.name.replace("-", " ").replace("_", " "))]
        titles += [page_title(text) for text in texts.values()]
        for title in titles:
            self._term(title, "the title", work.name)
        said: list[str] = []  # lines of dialogue
        acted: list[str] = []  # lines of action
        for number, text in texts.items():
            for element in fountain.parse(io.StringIO(text)):
                if isinstance(element, Slug):
                    place = _location(str(element.line))
                    if place:
                        self._term(place, "the scene-heading location", work.name)
                if isinstance(element, Action):
                    acted.extend(str(line) for line in element.lines)
                dialogs = [element.left, element.right] if isinstance(element, DualDialog) else [element]
                for dialog in dialogs:
                    if isinstance(dialog, Dialog):
                        name = str(dialog.character).split("(")[0].strip().lstrip("@")
                        if name:
                            self._term(name, "the speaking character", work.name)
                        said.extend(str(line) for parenthetical, line in dialog.blocks if not parenthetical)
            words = [w.lower() for w in WORD.findall(fold(text))]
            for i in range(len(words) - MIN_RUN + 1):
                self.runs.setdefault(hash(tuple(words[i : i + MIN_RUN])), (work.name, number))
        # After cues and headings, so a cue keeps its name ("the speaking character").
        lower_words = {w for text in texts.values() for w in WORD.findall(fold(text)) if w.islower()}
        found = [(noun, "the proper noun") for text in texts.values() for noun in proper_nouns(text)]
        found += [(name, "the character") for line in acted + said for name in titled_names(line)]
        found += [(name, "the introduced character") for line in acted for name in introduced_names(line)]
        addressed = [name for line in said for name in addressed_names(line, lower_words)]
        found += [(name, "the character addressed in dialogue") for name in addressed]
        for name, what in sorted(found):
            self._term(name, what, work.name)

    def _term(self, name: str, what: str, work: str) -> None:
        for form in sorted(variants(name)):
            self.terms.setdefault(form, (what, work))
        self._pattern = None
        self._signature = None

    def check(self, rel: str, text: str) -> list[str]:
        """Every leak in one note, each as 'path: what leaked, from which work; what to do'."""
        problems: list[str] = []
        seen: set[str] = set()
        for term, (what, work) in self._found_terms(text):
            if term.upper() in seen:
                continue
            seen.add(term.upper())
            problems.append(
                Leak(
                    f"{rel}: names {what} {term!r} of the training work {work}; "
                    "illustrate with an invented name or place instead"
                )
            )
        problems.extend(self._shared_runs(rel, text))
        return problems

    def _found_terms(self, text: str) -> list[tuple[str, tuple[str, str]]]:
        if not self.terms:
            return []
        if self._pattern is None:
            # One alternation, longest first, so ROSIE'S DINER wins over ROSIE; whole words,
            # case as written: "Mara" and "MARA" leak, "marathon" and "mara" do not.
            names = "|".join(re.escape(t) for t in sorted(self.terms, key=len, reverse=True))
            self._pattern = re.compile(rf"(?<![\w'])(?:{names})(?![\w])")
        folded = fold(text)  # one character for one: a match's place is the same in the note
        found = []
        for m in self._pattern.finditer(folded):
            term = m.group(0)
            # A common word that is also a name leaks in capitals or mid-sentence, not where
            # any word is capitalised: "Kit each character out" opens a sentence.
            if " " not in term and not term.isupper() and common(term) and at_sentence_start(folded, m.start()):
                continue
            found.append((text[m.start() : m.end()], self.terms[term]))
        return found

    def _shared_runs(self, rel: str, text: str) -> list[str]:
        words = WORD.findall(fold(text))
        lowered = [w.lower() for w in words]
        problems: list[str] = []
        i = 0
        while i <= len(words) - MIN_RUN:
            origin = self.runs.get(hash(tuple(lowered[i : i + MIN_RUN])))
            if origin is None:
                i += 1
                continue
            end = i + MIN_RUN
            while end < len(words) and hash(tuple(lowered[end - MIN_RUN + 1 : end + 1])) in self.runs:
                end += 1
            work, episode = origin
            quoted = " ".join(words[i:end])
            problems.append(
                Leak(
                    f'{rel}: shares a run of {end - i} words with {work} episode {episode} ("{quoted}"); '
                    "write the example in your own words"
                )
            )
            i = end
        return problems


def _location(slug: str) -> str:
    """The place in a scene heading: `INT. ROSIE'S DINER - NIGHT` -> `ROSIE'S DINER`."""
    line = SLUG_PREFIX.sub("", slug.strip().lstrip(".")).strip()
    if " - " in line:
        line = line.rsplit(" - ", 1)[0]
    return line.strip(" -")


def _title_case(name: str) -> str:
    return " ".join(part[:1].upper() + part[1:].lower() for part in name.split())


def page_title(text: str) -> str:
    """The title on an episode's Fountain title page (`Title: ...`, its first key), markup dropped; "" if none."""
    page = text.lstrip().split("\n\n", 1)[0]  # a title page is the key: value lines before the first blank
    match = TITLE_PAGE_TITLE.search(page) if TITLE_PAGE_KEY.match(page) else None
    if not match:
        return ""
    return " ".join(re.sub(r"[*_]", "", match.group(1)).split())
