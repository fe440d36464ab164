"""Screenplay PDFs the import tests draw themselves: a second layout, independent of screenplain's.

Final Draft's margins (action at 1.5 inches, dialogue at 2.5, parentheticals at 3.1, cues at
3.7, transitions at 6.0), Courier 12 at six lines an inch, 54 lines a page, and everything a
production draft adds: a running header and page numbers, scene numbers in both margins,
a speech cut by a page break marked (MORE) and picked up by NAME (CONT'D), and revised pages
with an asterisk in the right margin of every changed line. `draw_pdf` returns how many of
each artefact it drew, so a test can hold the importer's count to it exactly.
"""

from __future__ import annotations

import io
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from screenplain.parsers import fountain
from screenplain.types import Action, Dialog, DualDialog, Slug, Transition

INCH = 72.0
COLUMNS = {"heading": 1.5, "action": 1.5, "dialogue": 2.5, "parenthetical": 3.1, "character": 3.7, "transition": 6.0}
WIDTHS = {"heading": 60, "action": 60, "dialogue": 35, "parenthetical": 24, "character": 30, "transition": 15}
LINES_PER_PAGE = 54


@dataclass
class Printed:
    kind: str
    text: str
    scene: int = 0  # a heading's scene number


def paragraphs(text: str) -> list[list[Printed]]:
    """The script as blocks that print together: a heading, an action paragraph, a whole speech."""
    blocks: list[list[Printed]] = []
    scene = 0
    for element in fountain.parse(io.StringIO(text)):
        if isinstance(element, Slug):
            scene += 1
            blocks.append([Printed("heading", str(element.line).strip(), scene)])
        elif isinstance(element, Transition):
            blocks.append([Printed("transition", str(element.line).strip())])
        elif isinstance(element, Action):
            blocks.append([Printed("action", " ".join(str(line) for line in element.lines))])
        elif isinstance(element, Dialog | DualDialog):
            for dialog in [element.left, element.right] if isinstance(element, DualDialog) else [element]:
                speech = [Printed("character", str(dialog.character).strip())]
                for parenthetical, line in dialog.blocks:
                    speech.append(Printed("parenthetical" if parenthetical else "dialogue", str(line).strip()))
                blocks.append(speech)
    return blocks


def lay_out(text: str) -> tuple[list[list[tuple[str, str, int]]], Counter[str]]:
    """Pages of (kind, text, scene) rows ("" kind: a blank row), splitting speeches with (MORE)/(CONT'D)."""
    pages: list[list[tuple[str, str, int]]] = [[]]
    drawn: Counter[str] = Counter()

    def room() -> int:
        return LINES_PER_PAGE - len(pages[-1])

    for block in paragraphs(text):
        rows = [(p.kind, line, p.scene) for p in block for line in textwrap.wrap(p.text, WIDTHS[p.kind]) or [""]]
        need = len(rows) + (1 if pages[-1] else 0)
        if need <= room():
            if pages[-1]:
                pages[-1].append(("", "", 0))
            pages[-1].extend(rows)
            continue
        speech = rows[0][0] == "character"
        fits = room() - 2  # a blank row before, and (MORE) after
        if speech and fits >= 3 and rows[fits - 1][0] == "dialogue" and len(rows) - fits >= 1:
            pages[-1].append(("", "", 0))
            pages[-1].extend(rows[:fits])
            pages[-1].append(("more", "(MORE)", 0))
            drawn["more"] += 1
            pages.append([("character", f"{rows[0][1]} (CONT'D)", 0)])
            drawn["cont'd"] += 1
            pages[-1].extend(rows[fits:])
        else:
            pages.append(list(rows))
    return pages, drawn


def draw_pdf(text: str, path: Path, *, title: str = "THE SHOW", revised: tuple[int, ...] = (2,)) -> Counter[str]:
    """Draw the script as a production PDF at `path`; return the artefacts drawn, by kind."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    pages, drawn = lay_out(text)
    width, height = letter
    pdf = canvas.Canvas(str(path), pagesize=letter)
    for number, rows in enumerate(pages, start=1):
        pdf.setFont("Courier", 12)
        pdf.drawString(1.5 * INCH, height - 0.5 * INCH, f"{title} - Blue Revision - 12/01/26")
        drawn["running header"] += 1
        if number > 1:
            pdf.drawRightString(7.5 * INCH, height - 0.5 * INCH, f"{number}.")
            drawn["page number"] += 1
        for index, (kind, line, scene) in enumerate(rows):
            if not kind:
                continue
            y = height - INCH - 12 * (index + 1)
            column = COLUMNS.get(kind, COLUMNS["character"])
            pdf.drawString(column * INCH, y, line)
            if kind == "heading" and scene:
                pdf.drawString((COLUMNS["heading"] - 0.75) * INCH, y, str(scene))
                pdf.drawString(7.35 * INCH, y, str(scene))
                drawn["scene number"] += 2
            if number in revised and index % 3 == 0:
                pdf.drawString(7.9 * INCH, y, "*")
                drawn["revision asterisk"] += 1
        pdf.showPage()
    pdf.save()
    return drawn


def lay_out_text(text: str) -> str:
    """The same layout as plain text: spaces for indents, a form feed between pages, numbers top right."""
    pages, _ = lay_out(text)
    sheets = []
    for number, rows in enumerate(pages, start=1):
        head = [f"{number}.".rjust(75) if number > 1 else "", ""]
        body = [" " * round((COLUMNS.get(kind, 3.7) - 1.5) * 10) + line if kind else "" for kind, line, _ in rows]
        sheets.append("\n".join(head + body))
    return "\f".join(sheets) + "\n"
