"""Dual dialogue printed side by side: two speeches on the same lines, read apart again.

Final Draft, Fade In and WriterDuet print two characters speaking at once as two narrow
speeches side by side, so one printed line holds words of both. Read as one line, the two
cues become one cue and the two speeches interleave word by word. A dual block starts on a
line of two cues (names in capitals, a wide gap between them, the second past the page's
middle) and runs over the rows right under it; each row is cut at the gutter, the widest
band between the two cues that no word of the block crosses. The block is taken out of the
page before the columns are learnt (its indents are its own) and read as two speeches, the
second marked dual, in the place the block stood.
"""

from __future__ import annotations

import statistics

from .fountain import Element
from .lines import INCH, Line, Page

GAP = 0.5 * INCH  # two cues on one line stand at least this far apart
ROWS = 1.6  # a row of the block is at most this many line pitches below the one before


def split_dual(pages: list[Page]) -> None:
    """Replace each dual block in `pages` by its first line, carrying the two speeches' elements."""
    for page in pages:
        pitch = _pitch(page)
        left = min((line.x0 for line in page.lines), default=0.0)
        kept: list[Line] = []
        index = 0
        while index < len(page.lines):
            line = page.lines[index]
            cut = _two_cues(line, page.width, left)
            if cut is None:
                kept.append(line)
                index += 1
                continue
            block = [line]
            while index + len(block) < len(page.lines):
                following = page.lines[index + len(block)]
                if following.top - block[-1].top > pitch * ROWS:
                    break
                block.append(following)
            line.dual = _speeches(block, _gutter(block, line.words[cut - 1].x0, line.words[cut].x0))
            kept.append(line)
            index += len(block)
        page.lines = kept


def _two_cues(line: Line, width: float, left: float) -> int | None:
    """Where a line of two cues splits (the index of the second cue's first word), or None."""
    words = line.words
    if len(words) < 2:
        return None
    gaps = [(words[i].x0 - words[i - 1].x1, i) for i in range(1, len(words))]
    gap, cut = max(gaps)
    if gap < GAP or words[cut].x0 < width / 2 or words[0].x0 < left + 0.5 * INCH:
        return None
    first, second = (" ".join(w.text for w in part) for part in (words[:cut], words[cut:]))
    return cut if _cue(first) and _cue(second) else None


def _cue(text: str) -> bool:
    name = text.split("(")[0].strip()
    return bool(name) and name.upper() == name and any(c.isalpha() for c in name) and len(text) <= 40


def _gutter(block: list[Line], start: float, end: float) -> float:
    """The middle of the widest band between `start` and `end` that no word of the block covers."""
    spans = sorted((w.x0, w.x1) for line in block for w in line.words if w.x1 > start and w.x0 < end)
    best, middle, reach = 0.0, (start + end) / 2, start
    for x0, x1 in spans:
        if x0 - reach > best:
            best, middle = x0 - reach, (reach + x0) / 2
        reach = max(reach, x1)
    if end - reach > best:
        middle = (reach + end) / 2
    return middle


def _speeches(block: list[Line], cut: float) -> list[Element]:
    """The block's two speeches, the left one first: a cue, then parentheticals and dialogue."""
    elements: list[Element] = []
    for right in (False, True):
        rows = [" ".join(w.text for w in line.words if (w.x0 >= cut) == right) for line in block]
        rows = [row for row in rows if row]
        if not rows:
            continue
        elements.append(Element("character", rows[0], dual=right))
        for row in rows[1:]:
            last = elements[-1]
            open_paren = last.kind == "parenthetical" and not last.text.endswith(")")
            kind = "parenthetical" if row.startswith("(") or open_paren else "dialogue"
            if last.kind == kind and (kind == "dialogue" or open_paren):
                last.text += ("" if last.text.endswith("-") and last.text[-2:-1].isalpha() else " ") + row
            else:
                elements.append(Element(kind, row))
    return elements


def _pitch(page: Page) -> float:
    steps = [b.top - a.top for a, b in zip(page.lines, page.lines[1:], strict=False) if b.top > a.top]
    return statistics.median(steps) if steps else 12.0
