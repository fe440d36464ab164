"""What a printed script adds that is not the script: removed before the lines are classified.

A production PDF carries page numbers (12A. on an A-page), a running header (the show, the
draft's colour and date) or, on a revised page only, a revision header ("REVISED 12/01/26"),
`(MORE)` under a speech a page break cut and `(CONT'D)` on the cue that picks it up,
`(CONTINUED)` and `CONTINUED: (2)` where a page cuts a scene, the automatic `(CONT'D)` of a
speaker who speaks again after action, scene numbers in both margins and revision asterisks
at the right edge. Left in, each is a line of action or a word of dialogue the loss would
count against the writer, so each is removed here and counted by kind, and the report says
how many of each went.
"""

from __future__ import annotations

import re
from collections import Counter

from .fountain import HEADING, Element
from .lines import INCH, NUMBER_LIKE, Line, Page

PAGE_NUMBER = re.compile(r"^(page\s+)?-?\s*\d+[A-Z]?\s*-?\.?$", re.IGNORECASE)
MORE = re.compile(r"^\(\s*MORE\s*\)$", re.IGNORECASE)
# "(CONTINUED)" at a page's foot; "CONTINUED:" at the next one's head, "CONTINUED: (2)" on the page after.
CONTINUED = re.compile(r"^\(?\s*CONTINUED\s*[:)]?\s*(\(\s*\d+\s*\))?\s*$", re.IGNORECASE)
# The header of a revised page: a revision's word and its date ("REVISED 12/01/26", "Blue Rev. (12/01/26)").
REVISION = re.compile(
    r"\b(REV|Rev|REVISED|Revised|REVISION|Revision|DRAFT|Draft)\b.*\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\)?$"
)
CONTD = re.compile(r"\s*\((CONT'D|CONT’D|CONTD|CONT\.|CONTINUING|CONT)\)\s*$", re.IGNORECASE)
ASTERISK = re.compile(r"^\*+$")
MARGIN_GAP = 0.25 * INCH  # what stands apart from the text by this much is in a margin
EDGE = 1.0 * INCH  # page numbers and running headers sit within an inch of the page's edge


def remove_artefacts(pages: list[Page]) -> Counter[str]:
    """Remove every artefact from `pages` in place; return how many of each kind went."""
    removed: Counter[str] = Counter()
    # Page numbers first: one printed on a running header's line stands apart like a scene number.
    _page_numbers(pages, removed)
    for page in pages:
        for line in page.lines:
            _margin_marks(line, removed)
        page.lines = [line for line in page.lines if line.words]
    _running_lines(pages, removed)
    _revision_headers(pages, removed)
    _page_breaks(pages, removed)
    return removed


def _margin_marks(line: Line, removed: Counter[str]) -> None:
    """Revision asterisks and scene numbers: words standing apart at either end of a line.

    An asterisk is a word of its own at an end of the line, however near the text. A scene
    number before a scene heading (or a CONTINUED: line) is one however near the heading, as
    "12A" set a fixed distance before it may end a few points from it; the same number after
    the line goes with it, and any other number there only when it stands in the margin.
    """
    words = line.words
    # Asterisks first: on a revised scene heading the asterisk stands outside the scene number.
    while len(words) >= 2 and ASTERISK.match(words[-1].text):
        words.pop()
        removed["revision asterisk"] += 1
    while len(words) >= 2 and ASTERISK.match(words[0].text):
        words.pop(0)
        removed["revision asterisk"] += 1
    if len(words) == 1 and ASTERISK.match(words[0].text):
        words.pop()
        removed["revision asterisk"] += 1
        return
    left = None
    if len(words) >= 2 and NUMBER_LIKE.match(words[0].text) and _heading_like(words[1:]):
        rest = " ".join(w.text for w in words[1:])
        if words[1].x0 - words[0].x1 >= MARGIN_GAP or HEADING.match(rest) or CONTINUED.match(rest.split(" ")[0]):
            left = words.pop(0).text
            removed["scene number"] += 1
    if len(words) >= 2 and NUMBER_LIKE.match(words[-1].text) and _heading_like(words[:-1]):
        if words[-1].text == left or words[-1].x0 - words[-2].x1 >= MARGIN_GAP:
            words.pop()
            removed["scene number"] += 1


def _heading_like(words: list) -> bool:
    text = " ".join(w.text for w in words)
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and text.upper() == text


def _page_numbers(pages: list[Page], removed: Counter[str]) -> None:
    """A number within an inch of the top or the bottom of its page, alone or apart at an end of its line."""
    for page in pages:
        edge = {id(line) for line in _edge_lines(page)}
        keep = []
        for line in page.lines:
            if id(line) in edge:
                if PAGE_NUMBER.match(line.text):
                    removed["page number"] += 1
                    continue
                words = line.words
                if len(words) >= 2 and PAGE_NUMBER.match(words[-1].text) and words[-1].x0 - words[-2].x1 >= MARGIN_GAP:
                    words.pop()
                    removed["page number"] += 1
                elif len(words) >= 2 and PAGE_NUMBER.match(words[0].text) and words[1].x0 - words[0].x1 >= MARGIN_GAP:
                    words.pop(0)
                    removed["page number"] += 1
            keep.append(line)
        page.lines = keep


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", text.strip().upper())


def _running_lines(pages: list[Page], removed: Counter[str]) -> None:
    """A header or footer: the same line (numbers aside) at the same height near the edge of many pages."""
    if len(pages) < 2:
        return
    seen: Counter[tuple[str, int]] = Counter()
    for page in pages:
        for line in _edge_lines(page):
            seen[(_shape(line.text), round(line.top / 3))] += 1
    running = {key for key, n in seen.items() if n >= max(2, len(pages) * 0.4)}
    for page in pages:
        edge = {id(line) for line in _edge_lines(page)}
        keep = []
        for line in page.lines:
            # (CONTINUED) at every foot is the page break's mark, which _page_breaks counts and reads.
            marks = CONTINUED.match(line.text) or MORE.match(line.text)
            if id(line) in edge and not marks and (_shape(line.text), round(line.top / 3)) in running:
                removed["running header"] += 1
            else:
                keep.append(line)
        page.lines = keep


def _revision_headers(pages: list[Page], removed: Counter[str]) -> None:
    """The header only a revised page carries ("REVISED 12/01/26"): too few pages hold it to run."""
    for page in pages:
        top = {id(line) for line in _edge_lines(page) if line.top < EDGE}
        kept = [line for line in page.lines if id(line) not in top or not REVISION.search(line.text)]
        removed["revision header"] += len(page.lines) - len(kept)
        page.lines = kept
    if not removed["revision header"]:
        del removed["revision header"]


def drop_repeated_contd(elements: list[Element], removed: Counter[str]) -> None:
    """The (CONT'D) a writing program adds to the cue of a speaker who speaks again after action.

    Final Draft prints it by itself (its "automatic character continueds"); the speaker is
    the one the scene heard last, so the cue loses no one. A (CONT'D) on anyone else stays.
    """
    last = ""
    for element in elements:
        if element.kind == "heading":
            last = ""
        elif element.kind == "character":
            name = CONTD.sub("", element.text).strip()
            if name != element.text.strip() and name == last:
                element.text = name
                removed["cont'd"] += 1
            last = name


def _edge_lines(page: Page) -> list[Line]:
    return [line for line in page.lines[:2] + page.lines[-2:] if line.top < EDGE or line.top > page.height - EDGE]


def _page_breaks(pages: list[Page], removed: Counter[str]) -> None:
    """(MORE) and CONTINUED at a page's foot, and the (CONT'D) cue and CONTINUED: at the next page's head.

    The cue that picks a cut speech up is marked `continues`, so the classifier joins the
    speech's two halves instead of starting a second speech by the same speaker.
    """
    cut_speech = False
    for page in pages:
        lines = page.lines
        while lines and CONTINUED.match(lines[0].text):
            lines.pop(0)
            removed["continued"] += 1
        if lines and cut_speech and CONTD.search(lines[0].text):
            line = lines[0]
            line.continues = True
            _drop_contd(line)
            removed["cont'd"] += 1
        cut_speech = False
        while lines and CONTINUED.match(lines[-1].text):
            lines.pop()
            removed["continued"] += 1
        if lines and MORE.match(lines[-1].text):
            lines.pop()
            removed["more"] += 1
            cut_speech = True


def _drop_contd(line: Line) -> None:
    """Take the (CONT'D) words off the end of a cue."""
    text = CONTD.sub("", line.text)
    keep = len(text.split())
    line.words = line.words[:keep]
