"""A laid-out page as the layout classifier reads it: lines of positioned words, in points.

PDF (pdf.py) and plain text laid out with spaces (text.py) both come down to this: a word's
left and right edge and a line's top on its page. Plain text counts a column as 7.2 points
(Courier 12, ten characters an inch), so one set of screenplay distances serves both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .fountain import Element

INCH = 72.0
NUMBER_LIKE = re.compile(r"^[A-Z]{0,2}\d+[A-Z]{0,2}\.?$")


@dataclass
class Word:
    x0: float
    x1: float
    text: str


@dataclass
class Line:
    """One printed line: its page (from 1), its top (points down the page) and its words left to right."""

    page: int
    top: float
    words: list[Word]
    # Set by artefact removal: this cue only repeats the speaker whose speech a page break cut.
    continues: bool = False
    kind: str = ""
    notes: list[str] = field(default_factory=list)
    # Set by dual.py on the first line of dual dialogue printed side by side: its two speeches.
    dual: list[Element] | None = None

    @property
    def x0(self) -> float:
        return self.words[0].x0

    @property
    def x1(self) -> float:
        return self.words[-1].x1

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


@dataclass
class Page:
    number: int
    width: float
    height: float
    lines: list[Line]


def lines_of_words(page: int, words: list[Word], tops: list[float], tolerance: float = 2.0) -> list[Line]:
    """Group words into lines by their top: words within `tolerance` points share a line."""
    rows: list[tuple[float, list[Word]]] = []
    for top, word in sorted(zip(tops, words, strict=True), key=lambda tw: (round(tw[0]), tw[1].x0)):
        if rows and abs(rows[-1][0] - top) <= tolerance:
            rows[-1][1].append(word)
        else:
            rows.append((top, [word]))
    return [Line(page, top, sorted(ws, key=lambda w: w.x0)) for top, ws in rows]
