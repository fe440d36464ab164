"""A screenplay PDF read into elements: its text layer, word by word with positions.

What productions circulate and script libraries hold is PDF, and a PDF keeps no paragraph
types, only where each character was drawn. pdfplumber (on pdfminer.six) gives every word
with its box, so a line's left indent is known to the point, which is what the layout
classifier (layout.py) tells cues from dialogue by; it installs from pure-Python wheels.
A PDF with no text layer (a scan) has nothing to read and is refused with the way on: OCR
it first. A PDF that needs a password is refused rather than guessed at.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..core.errors import UsageError
from .artefacts import remove_artefacts
from .fountain import Script
from .layout import classify, learn_columns
from .lines import Page, Word, lines_of_words


def read_pdf(path: Path) -> tuple[Script, Counter[str], list[tuple[int, str]]]:
    """Read a PDF script: its elements, the artefacts removed by kind, the lines no column explains."""
    pages = _pages(path)
    title, pages = _title_page(pages)
    count = len(pages) + (1 if title else 0)
    removed = remove_artefacts(pages)
    columns = learn_columns(pages)
    classified = classify(pages, columns)
    return Script(classified.elements, title, count), removed, classified.unclassified


def _pages(path: Path) -> list[Page]:
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfplumber.utils.exceptions import PdfminerException

    try:
        with pdfplumber.open(path) as pdf:
            pages = [_page(number, page) for number, page in enumerate(pdf.pages, start=1)]
    except (PdfminerException, PDFPasswordIncorrect, PDFEncryptionError) as exc:
        cause = exc.args[0] if isinstance(exc, PdfminerException) and exc.args else exc
        if isinstance(cause, PDFPasswordIncorrect | PDFEncryptionError):
            raise UsageError(f"{path} is an encrypted PDF; save an unencrypted copy and import that") from None
        if isinstance(cause, PDFSyntaxError):
            raise UsageError(
                f"{path} is not a readable PDF ({cause}); export it again from the writing program"
            ) from None
        raise UsageError(f"{path} cannot be read as a PDF ({cause}); export it again") from None
    if not any(page.lines for page in pages):
        raise UsageError(f"{path} has no text layer; OCR it first (or export the script from its writing program)")
    return pages


def _page(number: int, page) -> Page:
    words = page.extract_words(keep_blank_chars=False, use_text_flow=False, x_tolerance=1.5)
    found = [Word(float(w["x0"]), float(w["x1"]), w["text"]) for w in words]
    tops = [float(w["top"]) for w in words]
    return Page(number, float(page.width), float(page.height), lines_of_words(number, found, tops))


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
