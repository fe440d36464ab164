"""A screenplay PDF read into elements: its text layer, character by character with positions.

What productions circulate and script libraries hold is PDF, and a PDF keeps no paragraph
types, only where each character was drawn. pypdfium2 (PDFium, the reader in Chrome, as a
wheel) gives every character with its box, so a line's left indent is known to the point,
which is what the layout classifier (layout.py) tells cues from dialogue by. pdfplumber gives
the same boxes, many times slower on a feature (docs/benchmarks.md, "Importing a screenplay PDF").
A PDF with no text layer (a scan) has nothing to read and is refused with the way on: OCR
it first. A PDF that needs a password is refused rather than guessed at.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import UsageError
from .artefacts import drop_repeated_contd, remove_artefacts
from .dual import split_dual
from .fountain import Script
from .layout import classify, learn_columns
from .lines import Page, Word, lines_of_words

if TYPE_CHECKING:
    from pypdfium2 import PdfPage  # untyped (pyproject's [tool.mypy]): documents what is passed


def read_pdf(path: Path) -> tuple[Script, Counter[str], list[tuple[int, str]]]:
    """Read a PDF script: its elements, the artefacts removed by kind, the lines no column explains."""
    pages = _pages(path)
    title, pages = _title_page(pages)
    count = len(pages) + (1 if title else 0)
    removed = remove_artefacts(pages)
    split_dual(pages)
    columns = learn_columns(pages)
    classified = classify(pages, columns)
    drop_repeated_contd(classified.elements, removed)
    return Script(classified.elements, title, count), removed, classified.unclassified


def _pages(path: Path) -> list[Page]:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code in (pdfium.raw.FPDF_ERR_PASSWORD, pdfium.raw.FPDF_ERR_SECURITY):
            raise UsageError(f"{path} is an encrypted PDF; save an unencrypted copy and import that") from None
        raise UsageError(f"{path} is not a readable PDF ({exc}); export it again from the writing program") from None
    try:
        pages = [_page(number, page) for number, page in enumerate(document, start=1)]
    finally:
        document.close()
    if not any(page.lines for page in pages):
        raise UsageError(f"{path} has no text layer; OCR it first (or export the script from its writing program)")
    return pages


def _page(number: int, page: PdfPage) -> Page:
    """A page's words with their left and right edges and their line's top, from the characters' boxes.

    The loose box of a character is its advance: its left edge is where the line was set,
    the same for every glyph of a column, which is what the indent clusters need.
    """
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    text = page.get_textpage()
    words: list[Word] = []
    tops: list[float] = []
    current: list[str] = []
    x0 = x1 = top = 0.0
    raw, box, loose = text.raw, pdfium_c.FS_RECTF(), pdfium_c.FPDFText_GetLooseCharBox
    count = pdfium_c.FPDFText_CountChars(raw)
    # The page's text in one call, one character per index; PDFium's own spaces and line ends
    # (its "generated" characters) are white space, so they end a word like a drawn space.
    chars = text.get_text_range(0, count)
    if len(chars) != count:  # characters outside the BMP: read them one index at a time
        chars = "".join(chr(pdfium_c.FPDFText_GetUnicode(raw, i)) for i in range(count))
    # PDFium reports a hyphen that ends a line as U+FFFE (it may be a soft hyphen); in a
    # script it is the hyphen of a word the line wrapped (eighty-/eight), so it is one.
    chars = chars.replace("\ufffe", "-")
    # One reused box and the C call itself: a feature has some 130,000 characters.
    for i, char in enumerate(chars):
        if char.isspace():
            if current:
                words.append(Word(x0, x1, "".join(current)))
                tops.append(top)
                current = []
            continue
        loose(raw, i, box)
        left, right, char_top = box.left, box.right, height - box.top
        # A gap wider than half a character, or another line, ends a word even with no space drawn.
        if current and (abs(char_top - top) > 2.0 or left - x1 > (right - left) * 0.5):
            words.append(Word(x0, x1, "".join(current)))
            tops.append(top)
            current = []
        if not current:
            x0, top = left, char_top
        current.append(char)
        x1 = right
    if current:
        words.append(Word(x0, x1, "".join(current)))
        tops.append(top)
    return Page(number, float(width), float(height), lines_of_words(number, words, tops))


def _title_page(pages: list[Page]) -> tuple[str | None, list[Page]]:
    """A first page of a few centred lines and no scene is a title page: its first line is the title."""
    if len(pages) < 2 or not pages[0].lines:
        return None, pages
    first = pages[0]
    width = first.width
    centred = [line for line in first.lines if abs((line.x0 + line.x1) / 2 - width / 2) < 0.6 * 72]
    if len(first.lines) > 20 or len(centred) < 1 or _has_heading(first):
        return None, pages
    return centred[0].text.strip(), pages[1:]


def _has_heading(page: Page) -> bool:
    from .fountain import HEADING

    return any(HEADING.match(line.text) for line in page.lines) or any(
        HEADING.match(" ".join(w.text for w in line.words[1:])) for line in page.lines
    )
