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
# Final Draft's dual dialogue: two narrower speeches side by side, in inches from the page's left edge.
DUAL_COLUMNS = {"character": (2.4, 5.2), "parenthetical": (1.8, 4.6), "dialogue": (1.5, 4.3)}
DUAL_WIDTHS = {"character": 20, "parenthetical": 20, "dialogue": 24}


@dataclass
class Printed:
    kind: str
    text: str
    scene: int = 0  # a heading's scene, in order from 1
    label: str = ""  # the number printed beside a heading: its scene's, or 12A for an inserted one
    contd: bool = False  # a cue with an automatic (CONT'D)
    side: int = 0  # in dual dialogue printed side by side: 1 the left speech, 2 the right


def paragraphs(
    text: str, *, contd: bool = False, inserted: frozenset[int] = frozenset(), side_by_side: bool = False
) -> list[list[Printed]]:
    """The script as blocks that print together: a heading, an action paragraph, a whole speech.

    With `contd`, a cue of the speaker who spoke last in the scene, with action between, gets
    Final Draft's automatic (CONT'D); `inserted` scenes (by their order, from 1) are numbered
    as a revision numbers a new scene, after the one before it with a letter (12A). With
    `side_by_side`, dual dialogue is one block of both speeches, each marked with its side.
    """
    blocks: list[list[Printed]] = []
    scene = number = 0
    label = ""
    speaker, acted = "", False
    for element in fountain.parse(io.StringIO(text)):
        if isinstance(element, Slug):
            scene += 1
            if scene in inserted and number:
                label = label + "A" if not label[-1].isalpha() else label[:-1] + chr(ord(label[-1]) + 1)
            else:
                number += 1
                label = str(number)
            blocks.append([Printed("heading", str(element.line).strip(), scene, label)])
            speaker, acted = "", False
        elif isinstance(element, Transition):
            blocks.append([Printed("transition", str(element.line).strip())])
        elif isinstance(element, Action):
            blocks.append([Printed("action", " ".join(str(line) for line in element.lines))])
            acted = True
        elif isinstance(element, Dialog | DualDialog):
            dual = isinstance(element, DualDialog)
            pair: list[Printed] = []
            for side, dialog in enumerate([element.left, element.right] if dual else [element], start=1):
                cue = str(dialog.character).strip()
                name = cue.split("(")[0].strip()
                repeated = contd and name == speaker and acted
                speech = [Printed("character", f"{cue} (CONT'D)" if repeated else cue, contd=repeated)]
                for parenthetical, line in dialog.blocks:
                    speech.append(Printed("parenthetical" if parenthetical else "dialogue", str(line).strip()))
                for printed in speech:
                    printed.side = side if dual and side_by_side else 0
                if dual and side_by_side:
                    pair += speech
                else:
                    blocks.append(speech)
                speaker, acted = name, False
            if pair:
                blocks.append(pair)
    return blocks


def with_dual_dialogue(text: str, every: int = 3) -> str:
    """`text` with every `every`-th pair of speeches by two speakers, one right after the other, made dual (^)."""
    blocks = text.split("\n\n")

    def cue(block: str) -> str | None:
        first = block.strip("\n").split("\n")[0]
        spoken = "\n" in block.strip("\n") and first.isupper() and not first.startswith(("INT", "EXT"))
        return first if spoken else None

    pairs = 0
    for i in range(1, len(blocks)):
        before, after = cue(blocks[i - 1]), cue(blocks[i])
        if before and after and before != after and not before.endswith("^"):
            pairs += 1
            if pairs % every == 0:
                blocks[i] = blocks[i].replace(after, after + " ^", 1)
    return "\n\n".join(blocks)


Row = tuple[str, str, str]  # (kind, text, the scene number printed beside a heading); "" kind: a blank row


def _rows(block: list[Printed]) -> list[Row]:
    return [(p.kind, line, p.label) for p in block for line in textwrap.wrap(p.text, WIDTHS[p.kind]) or [""]]


def _dual_rows(block: list[Printed]) -> list[Row]:
    """Dual dialogue side by side: one row a line, kind "dual LEFT RIGHT" and text "left<TAB>right"."""
    sides = [
        [(p.kind, line) for p in block if p.side == side for line in textwrap.wrap(p.text, DUAL_WIDTHS[p.kind])]
        for side in (1, 2)
    ]
    height = max(len(side) for side in sides)
    for side in sides:
        side += [("", "")] * (height - len(side))
    return [(f"dual {lk or '-'} {rk or '-'}", f"{lt}\t{rt}", "") for (lk, lt), (rk, rt) in zip(*sides, strict=True)]


def lay_out(
    text: str,
    *,
    lines: int = LINES_PER_PAGE,
    contd: bool = False,
    inserted: frozenset[int] = frozenset(),
    side_by_side: bool = False,
) -> tuple[list[list[Row]], Counter[str]]:
    """Pages of rows, `lines` a page, splitting speeches with (MORE)/(CONT'D) (see `paragraphs`)."""
    pages: list[list[Row]] = [[]]
    drawn: Counter[str] = Counter()

    def room() -> int:
        return lines - len(pages[-1])

    for block in paragraphs(text, contd=contd, inserted=inserted, side_by_side=side_by_side):
        drawn["cont'd"] += sum(p.contd for p in block)
        rows = _dual_rows(block) if block[0].side else _rows(block)
        need = len(rows) + (1 if pages[-1] else 0)
        if need <= room():
            if pages[-1]:
                pages[-1].append(("", "", ""))
            pages[-1].extend(rows)
            continue
        speech = rows[0][0] == "character"
        fits = room() - 2  # a blank row before, and (MORE) after
        if speech and fits >= 3 and rows[fits - 1][0] == "dialogue" and len(rows) - fits >= 1:
            pages[-1].append(("", "", ""))
            pages[-1].extend(rows[:fits])
            pages[-1].append(("more", "(MORE)", ""))
            drawn["more"] += 1
            name = rows[0][1].removesuffix(" (CONT'D)")
            pages.append([("character", f"{name} (CONT'D)", "")])
            drawn["cont'd"] += 1
            pages[-1].extend(rows[fits:])
        else:
            pages.append(list(rows))
    drawn = +drawn  # no kind drawn zero times
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


def draw_final_draft(
    text: str,
    path: Path,
    *,
    revised: frozenset[int] = frozenset({2}),
    a_pages: frozenset[int] = frozenset({3}),
    inserted: frozenset[int] = frozenset(),
    side_by_side: bool = True,
) -> Counter[str]:
    """Draw the script as Final Draft prints a revised production draft; return the artefacts drawn, by kind.

    No running header: only a revised page (in `revised`, by its place from 1) carries one,
    "REVISED 12/01/26" beside its page number, and an asterisk beside every third line. A
    sheet in `a_pages` is an A-page, numbered after the one before it ("2A.") and revised
    too. Scene numbers stand in both margins, the left one 0.5 inch before the heading (so
    "12A" ends 0.2 inch from it); `inserted` scenes are numbered 12A, 12B. A scene cut by a
    page ends in "(CONTINUED)" at the page's foot and goes on under "CONTINUED:" (then
    "CONTINUED: (2)") with its scene number in both margins; a speaker who speaks again
    after action gets an automatic (CONT'D). Dual dialogue is printed side by side.
    """
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    pages, drawn = lay_out(text, lines=LINES_PER_PAGE - 3, contd=True, inserted=inserted, side_by_side=side_by_side)
    width, height = letter
    pdf = canvas.Canvas(str(path), pagesize=letter)
    number, scene, cut = 0, "", 0
    for sheet, rows in enumerate(pages, start=1):
        pdf.setFont("Courier", 12)
        number += sheet not in a_pages
        changed = sheet in revised or sheet in a_pages
        if changed:
            pdf.drawString(4.0 * INCH, height - 0.5 * INCH, "REVISED 12/01/26")
            drawn["revision header"] += 1
        if sheet > 1:
            label = f"{number}A." if sheet in a_pages else f"{number}."
            pdf.drawRightString(7.5 * INCH, height - 0.5 * INCH, label)
            drawn["page number"] += 1
        head = rows[0][0] != "heading" and sheet > 1
        cut = cut + 1 if head else 0
        if head:
            rows = [("continued", "CONTINUED:" if cut == 1 else f"CONTINUED: ({cut})", scene), ("", "", ""), *rows]
            drawn["continued"] += 1
        for index, (kind, line, mark) in enumerate(rows):
            if not kind:
                continue
            y = height - INCH - 12 * (index + 1)
            if kind.startswith("dual "):
                for side, (part, said) in enumerate(zip(kind.split()[1:], line.split("\t"), strict=True)):
                    if said:
                        pdf.drawString(DUAL_COLUMNS[part][side] * INCH, y, said)
            else:
                pdf.drawString(COLUMNS.get(kind, COLUMNS["heading"] if kind == "continued" else 3.7) * INCH, y, line)
            if mark:
                scene = mark if kind == "heading" else scene
                pdf.drawString((COLUMNS["heading"] - 0.5) * INCH, y, mark)
                pdf.drawString(7.6 * INCH, y, mark)
                drawn["scene number"] += 2
            if changed and index % 3 == 0:
                pdf.drawString(8.05 * INCH, y, "*")
                drawn["revision asterisk"] += 1
        if sheet < len(pages) and pages[sheet][0][0] != "heading":
            pdf.drawString(6.0 * INCH, 0.6 * INCH, "(CONTINUED)")
            drawn["continued"] += 1
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
