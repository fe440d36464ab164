"""Plain-text screenplays: laid out with spaces like a printed page, or already Fountain.

A script saved as text from a writing program, or typed to the printed layout, says what a
line is by its leading spaces exactly as a PDF does by its indent, so it goes through the
same artefact removal and layout classifier (a column counted as 7.2 points, Courier's
ten characters an inch; a form feed starts a page). A `.txt` whose lines are not indented
is Fountain under another name and is normalised like a `.fountain` file.
"""

from __future__ import annotations

from collections import Counter

from .artefacts import drop_repeated_contd, remove_artefacts
from .dual import split_dual
from .fountain import Script, normalise, title_of_fountain
from .layout import classify, learn_columns
from .lines import INCH, Line, Page, Word

COLUMN_WIDTH = 7.2
LINE_HEIGHT = 12.0
LINES_PER_PAGE = 55
INDENTED = 8  # a cue or dialogue line starts at least this many spaces in


def is_laid_out(text: str) -> bool:
    """Whether the text is a printed layout (cues and dialogue indented) rather than Fountain."""
    lines = [line.expandtabs(8) for line in text.splitlines() if line.strip()]
    indented = sum(1 for line in lines if len(line) - len(line.lstrip(" ")) >= INDENTED)
    return bool(lines) and indented >= max(2, len(lines) * 0.15)


def read_fountain(text: str) -> tuple[str, str | None]:
    """A Fountain script as the work keeps it, and the title its title page gives."""
    clean = normalise(text)
    return clean, title_of_fountain(clean)


def read_laid_out(text: str) -> tuple[Script, Counter[str], list[tuple[int, str]]]:
    """A script laid out with spaces: elements, the artefacts removed by kind, the unclassified lines."""
    pages = _pages(text)
    removed = remove_artefacts(pages)
    split_dual(pages)
    columns = learn_columns(pages)
    classified = classify(pages, columns)
    drop_repeated_contd(classified.elements, removed)
    return Script(classified.elements, None, len(pages)), removed, classified.unclassified


def _pages(text: str) -> list[Page]:
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    sheets = text.split("\f") if "\f" in text else _by_length(text.split("\n"))
    pages = []
    for number, sheet in enumerate(sheets, start=1):
        rows = sheet.strip("\n").split("\n") if "\f" in text else sheet.split("\n")
        lines = [_line(number, index, row.expandtabs(8)) for index, row in enumerate(rows) if row.strip()]
        pages.append(Page(number, 8.5 * INCH, max(len(rows), LINES_PER_PAGE) * LINE_HEIGHT, lines))
    return [page for page in pages if page.lines] or pages[:1]


def _by_length(rows: list[str]) -> list[str]:
    """Text with no form feeds is one page of lines after another; only its length says where pages end."""
    return ["\n".join(rows[i : i + LINES_PER_PAGE]) for i in range(0, max(len(rows), 1), LINES_PER_PAGE)]


def _line(page: int, index: int, row: str) -> Line:
    words = []
    column = 0
    for part in row.split(" "):
        if part:
            words.append(Word(column * COLUMN_WIDTH, (column + len(part)) * COLUMN_WIDTH, part))
        column += len(part) + 1
    # A line's top is its row: blank rows are gaps, as white space is on a printed page.
    return Line(page, (index + 2) * LINE_HEIGHT, words)
