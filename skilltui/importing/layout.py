"""Which line of a printed script is what, told by where it starts: the shared layout classifier.

A screenplay says what a line is by its left indent: scene headings and action at the
margin, dialogue about an inch in, parentheticals between, the character cue about 2.2
inches in, transitions to the right. Programs and typists differ by a few characters
(screenplain sets dialogue 0.9 inch in, Final Draft 1.0), so the columns are learnt from
each file's own indents: the lines are clustered by where they start, the margin is the
leftmost column that holds a real share of the lines, and the cue, dialogue and
parenthetical columns are told apart by what their lines look like (cues in capitals,
parentheticals in brackets, dialogue the most lines in between). A line that starts in no
column the file uses is reported as unclassified, with its page and text, and kept as action
so that nothing of the script is lost silently.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from .fountain import HEADING, Element
from .lines import INCH, Line, Page

COLUMN = 5.0  # points: lines that start this close share a column (half a Courier character)
TRANSITION = re.compile(r"^[A-Z0-9 .'’-]+(TO:|OUT\.|IN:|BLACK\.|OUT:)$")
TIME_OF_DAY = re.compile(r" [-–—] (DAY|NIGHT|DAWN|DUSK|MORNING|EVENING|LATER|CONTINUOUS|SAME|MOMENTS LATER)\b")


@dataclass
class Columns:
    """The columns one file uses, in points from the page's left edge (None: the file has none)."""

    margin: float
    dialogue: float | None = None
    parenthetical: list[float] = field(default_factory=list)
    cue: float | None = None
    centre: float = 4.25 * INCH


@dataclass
class Classified:
    elements: list[Element]
    unclassified: list[tuple[int, str]]


def learn_columns(pages: list[Page]) -> Columns:
    """Learn the margin and the dialogue, parenthetical and cue columns from the file's own lines."""
    lines = [line for page in pages for line in page.lines if line.dual is None]
    if not lines:  # only artefacts on the pages: nothing to classify, and the importer says so
        return Columns(1.5 * INCH)
    clusters = _clusters([line.x0 for line in lines])
    floor = max(2, len(lines) * 0.03)
    real = [c for c in clusters if clusters[c] >= floor] or list(clusters)
    margin = min(real)
    by_column: dict[float, list[Line]] = {}
    for line in lines:
        column = _nearest(line.x0, list(clusters))
        by_column.setdefault(column, []).append(line)
    inner = [c for c in real if 0.3 * INCH < c - margin < 4.0 * INCH]
    caps = {c: _share(by_column[c], _is_cue_text) for c in inner}
    parens = {c: _share(by_column[c], lambda t: t.startswith("(")) for c in inner}
    cue_columns = [c for c in inner if caps[c] >= 0.75 and c - margin >= 1.2 * INCH]
    cue = max(cue_columns, key=lambda c: len(by_column[c]), default=None)
    spoken = [c for c in inner if c != cue and caps[c] < 0.75 and parens[c] < 0.5 and (cue is None or c < cue)]
    dialogue = max(spoken, key=lambda c: len(by_column[c]), default=None)
    # Parentheticals are few, so their column is looked for among every column, however small.
    between = [c for c in clusters if 0.3 * INCH < c - margin < 4.0 * INCH and c not in (cue, dialogue)]
    parenthetical = [c for c in between if _share(by_column[c], lambda t: t.startswith("(")) >= 0.3]
    width = pages[0].width if pages else 8.5 * INCH
    return Columns(margin, dialogue, parenthetical, cue, centre=_centre(pages, width))


def classify(pages: list[Page], columns: Columns) -> Classified:
    """Turn the lines of every page into elements, joining wrapped lines and speeches cut by a page."""
    elements: list[Element] = []
    unclassified: list[tuple[int, str]] = []
    previous: Line | None = None
    pitch = _pitch(pages)
    open_paren = False
    for page in pages:
        for line in page.lines:
            if line.dual is not None:  # dual dialogue, read apart already
                elements.extend(line.dual)
                previous, open_paren = line, False
                continue
            kind = _kind(line, columns, open_paren, elements)
            if kind == "unclassified":
                unclassified.append((line.page, line.text))
                kind = "action"
            if line.continues and elements and elements[-1].kind in ("dialogue", "parenthetical"):
                previous = line  # a (CONT'D) cue at a page's head: the speech goes on, no new cue
                continue
            text = line.text
            joins = _joins(line, previous, kind, elements, pitch)
            if joins:
                # A line wrapped at a word's own hyphen (eighty-/eight) joins it without a space.
                glued = re.search(r"[^\W\d_]-$", elements[-1].text) and text[:1].isalpha()
                elements[-1].text += ("" if glued else " ") + text
            else:
                elements.append(Element(kind, text))
            if kind == "parenthetical":
                open_paren = not elements[-1].text.rstrip().endswith(")")
            elif kind != "character":
                open_paren = False
            previous = line
    return Classified(elements, unclassified)


def _kind(line: Line, columns: Columns, open_paren: bool, elements: list[Element]) -> str:
    text, x = line.text, line.x0
    after_cue = bool(elements) and elements[-1].kind in ("character", "parenthetical", "dialogue")
    if _near(x, columns.margin):
        if HEADING.match(text) or (text.isupper() and TIME_OF_DAY.search(text)):
            return "heading"
        if TRANSITION.match(text) and text.endswith(":") and not text.startswith("FADE IN"):
            return "transition"
        return "action"
    if columns.cue is not None and _near(x, columns.cue) and _is_cue_text(text):
        return "character"
    if any(_near(x, c) for c in columns.parenthetical) or (
        columns.dialogue is not None and _near(x, columns.dialogue) and text.startswith("(")
    ):
        if text.startswith("(") or open_paren:
            return "parenthetical" if after_cue else "unclassified"
        return "dialogue" if after_cue else "unclassified"
    if columns.dialogue is not None and _near(x, columns.dialogue):
        return "dialogue" if after_cue else "unclassified"
    if text.isupper() and TRANSITION.match(text) and x > columns.margin + 2.5 * INCH:
        return "transition"
    if abs((line.x0 + line.x1) / 2 - columns.centre) <= 0.3 * INCH and x > columns.margin + 0.5 * INCH:
        return "centered"
    if columns.cue is not None and _is_cue_text(text) and abs(x - columns.cue) < 1.0 * INCH:
        return "character"
    return "unclassified"


def _joins(line: Line, previous: Line | None, kind: str, elements: list[Element], pitch: float) -> bool:
    """Whether `line` goes on the element before it: a wrapped line, or a speech resumed on a new page."""
    if previous is None or not elements or elements[-1].kind != kind or kind in ("character", "heading"):
        return kind == "heading" and _wrapped_heading(line, previous, elements, pitch)
    if kind == "parenthetical" and elements[-1].text.rstrip().endswith(")"):
        return False
    if line.page != previous.page:
        return kind in ("dialogue", "action", "parenthetical")
    return line.top - previous.top <= pitch * 1.5 and abs(line.x0 - previous.x0) <= 2 * INCH


def _wrapped_heading(line: Line, previous: Line | None, elements: list[Element], pitch: float) -> bool:
    return (
        previous is not None
        and bool(elements)
        and elements[-1].kind == "heading"
        and line.page == previous.page
        and line.top - previous.top <= pitch * 1.5
        and not HEADING.match(line.text)
    )


def _pitch(pages: list[Page]) -> float:
    """The usual distance from one line to the next: single spacing in this file."""
    steps = [b.top - a.top for page in pages for a, b in zip(page.lines, page.lines[1:], strict=False) if b.top > a.top]
    return statistics.median(steps) if steps else 12.0


def _clusters(xs: list[float]) -> Counter[float]:
    """Left edges grouped into columns: each column by its most common edge, with its count of lines."""
    columns: list[list[float]] = []
    for x in sorted(xs):
        if columns and x - columns[-1][-1] <= COLUMN:
            columns[-1].append(x)
        else:
            columns.append([x])
    return Counter({Counter(round(x, 1) for x in c).most_common(1)[0][0]: len(c) for c in columns})


def _nearest(x: float, columns: list[float]) -> float:
    return min(columns, key=lambda c: abs(c - x))


def _near(x: float, column: float | None) -> bool:
    return column is not None and abs(x - column) <= COLUMN + 1.0


def _share(lines: list[Line], test: Callable[[str], bool]) -> float:
    return sum(1 for line in lines if test(line.text)) / len(lines) if lines else 0.0


def _is_cue_text(text: str) -> bool:
    """A cue: a name in capitals, perhaps with an extension in brackets, short and ending no sentence."""
    name = text.split("(")[0].strip().removesuffix("^").strip()
    return bool(name) and name.upper() == name and any(c.isalpha() for c in name) and len(text) <= 50


def _centre(pages: list[Page], width: float) -> float:
    """The middle of the text column: half way between the margin and the widest line's end."""
    ends = [line.x1 for page in pages for line in page.lines if line.dual is None]
    starts = [line.x0 for page in pages for line in page.lines if line.dual is None]
    if not ends:
        return width / 2
    return (min(starts) + max(ends)) / 2
