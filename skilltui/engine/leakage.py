"""The leakage guard: a note must teach craft, never the answers of the training works.

A writer that reads a note naming a training work's characters, its scene-heading places
or its title, or copying its lines, is being handed the targets (target leakage): the loss
falls while nothing that transfers to a new show was learned. So the linter is given the
run's training works and rejects a note that

- names a speaking character (a cue in a human episode), a scene-heading location, or a
  work's title, written the way a script or a reader writes them (`MARA` or `Mara`,
  `ROSIE'S DINER` or `Rosie's Diner`); a lower-case common word (`a kitchen`) is no leak;
- shares a run of `MIN_RUN` (8) or more words with a human episode.

A problem names what leaked and the work it came from, quoting only the offending words,
so the agent can replace them with an invented example.

Run it by hand: `skilltui lint POOL --work DIR ...`.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from screenplain.parsers import fountain
from screenplain.types import Dialog, DualDialog, Slug

from .works import Work

MIN_RUN = 8
WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z0-9]+)*")
SLUG_PREFIX = re.compile(r"^(?:INT\./EXT\.|EXT\./INT\.|INT/EXT|I/E|INT\.?|EXT\.?|EST\.?)\s+", re.IGNORECASE)


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
        # Without a title in work.toml the prompts call the work by its folder name.
        title = work.meta.get("title", "").strip() or _title_case(work.name.replace("-", " ").replace("_", " "))
        self._term(title, "the title", work.name)
        for number, path in work.episodes.items():
            text = path.read_text(encoding="utf-8", errors="replace")
            for element in fountain.parse(io.StringIO(text)):
                if isinstance(element, Slug):
                    place = _location(str(element.line))
                    if place:
                        self._term(place, "the scene-heading location", work.name)
                dialogs = [element.left, element.right] if isinstance(element, DualDialog) else [element]
                for dialog in dialogs:
                    if isinstance(dialog, Dialog):
                        name = str(dialog.character).split("(")[0].strip()
                        if name:
                            self._term(name, "the speaking character", work.name)
            words = [w.lower() for w in WORD.findall(text)]
            for i in range(len(words) - MIN_RUN + 1):
                self.runs.setdefault(hash(tuple(words[i : i + MIN_RUN])), (work.name, number))

    def _term(self, name: str, what: str, work: str) -> None:
        name = " ".join(name.split())
        if len(name) < 2 or not any(c.isalpha() for c in name):
            return
        for form in {name, name.upper(), _title_case(name)}:
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
                f"{rel}: names {what} {term!r} of the training work {work}; "
                "illustrate with an invented name or place instead"
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
            self._pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{names})(?![A-Za-z0-9])")
        return [(m.group(0), self.terms[m.group(0)]) for m in self._pattern.finditer(text)]

    def _shared_runs(self, rel: str, text: str) -> list[str]:
        words = WORD.findall(text)
        lowered = [w.lower() for w in words]
        problems = []
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
                f'{rel}: shares a run of {end - i} words with {work} episode {episode} ("{quoted}"); '
                "write the example in your own words"
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
