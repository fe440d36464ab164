"""A Final Draft file (.fdx) read into elements: its XML paragraphs, by the type each one names.

Final Draft, WriterDuet, Fade In and Highland all write .fdx, and unlike a PDF it says what
each paragraph is (Scene Heading, Action, Character, Dialogue, Parenthetical, Transition,
Shot, General), so nothing is guessed. The XML is parsed with defusedxml, which refuses
entity declarations and external references: a script from someone else can neither read a
file of this machine into the episode nor expand a few bytes into gigabytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from xml.etree.ElementTree import Element as XmlElement
from xml.etree.ElementTree import ParseError

from ..core.errors import UsageError
from .fountain import Element, Script

TYPES = {
    "scene heading": "heading",
    "action": "action",
    "general": "action",
    "shot": "action",  # a shot is a new angle in the same scene, written in capitals as action
    "character": "character",
    "dialogue": "dialogue",
    "parenthetical": "parenthetical",
    "transition": "transition",
}


def read_fdx(path: Path) -> tuple[Script, Counter[str], list[tuple[int | None, str]]]:
    """Read an FDX script: its elements, nothing removed, and the paragraphs of a type it does not know."""
    import defusedxml.ElementTree as SafeTree
    from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden

    try:
        root = SafeTree.parse(path, forbid_dtd=False, forbid_entities=True, forbid_external=True).getroot()
    except ExternalReferenceForbidden:
        raise UsageError(f"{path} refers to an external entity; save it again from the writing program") from None
    except EntitiesForbidden as exc:
        if exc.sysid or exc.pubid:
            raise UsageError(f"{path} declares an external entity; save it again from the writing program") from None
        raise UsageError(
            f"{path} declares XML entities (an XML bomb, or not a writing program's file); save it again"
        ) from None
    except DTDForbidden:
        raise UsageError(f"{path} has a DTD; save it again from the writing program") from None
    except ParseError as exc:
        raise UsageError(f"{path} is not well-formed XML ({exc}); save it again from the writing program") from None
    if root is None:
        raise UsageError(f"{path} holds no XML element; save it again from the writing program")
    if root.tag != "FinalDraft":
        raise UsageError(f"{path} is XML but not a Final Draft script (its root is <{root.tag}>)")
    content = root.find("Content")
    if content is None:
        raise UsageError(f"{path} has no <Content>: it holds no script")
    elements: list[Element] = []
    unknown: list[tuple[int | None, str]] = []
    walked = list(_walk(content))
    for paragraph, dual in walked:
        _paragraph(paragraph, elements, unknown, dual)
    return Script(elements, _title(root), _pages([p for p, _ in walked])), Counter(), unknown


def _walk(content: XmlElement) -> Iterator[tuple[XmlElement, bool]]:
    """The paragraphs in reading order, a dual dialogue's inner ones in its place; True marks its second cue.

    An explicit stack, not recursion: paragraphs nested thousands deep (no writing program
    writes them, a crafted file can) are walked like flat ones instead of exhausting Python's stack.
    """
    stack: list[tuple[XmlElement, bool]] = [(p, False) for p in reversed(content.findall("Paragraph"))]
    while stack:
        paragraph, dual = stack.pop()
        duals = paragraph.findall("DualDialogue")
        if not duals:
            yield paragraph, dual
            continue
        inner: list[tuple[XmlElement, bool]] = []
        for block in duals:
            cues = 0
            for child in block.findall("Paragraph"):
                is_cue = (child.get("Type") or "").lower() == "character"
                cues += is_cue
                inner.append((child, is_cue and cues == 2))
        stack.extend(reversed(inner))


def _paragraph(
    paragraph: XmlElement, elements: list[Element], unknown: list[tuple[int | None, str]], dual: bool
) -> None:
    text = _text(paragraph)
    if not text.strip():
        return
    kind_name = (paragraph.get("Type") or "General").lower()
    kind = TYPES.get(kind_name)
    if kind is None:
        page = paragraph.get("Page") or ""
        unknown.append((int(page) if page.isdigit() else None, f"[{paragraph.get('Type')}] {text}"))
        kind = "action"
    if kind == "action" and (paragraph.get("Alignment") or "").lower() == "center":
        kind = "centered"
    elements.append(Element(kind, text, dual=dual))


def _text(paragraph: XmlElement) -> str:
    """A paragraph's words: its <Text> runs joined, line breaks inside it kept as spaces."""
    return " ".join("".join(t.text or "" for t in paragraph.findall("Text")).split())


def _title(root: XmlElement) -> str | None:
    """The first line of the title page, which Final Draft centres as the title."""
    page = root.find("TitlePage")
    if page is None:
        return None
    for paragraph in page.iter("Paragraph"):
        text = _text(paragraph)
        if text:
            return text
    return None


def _pages(paragraphs: list[XmlElement]) -> int:
    """Pages, from the page numbers Final Draft keeps, else estimated at 55 lines a page."""
    numbers = [page for p in paragraphs if (page := p.get("Page") or "").isdigit()]
    if numbers:
        return max(int(n) for n in numbers)
    lines = sum(1 + len(_text(p)) // 60 for p in paragraphs)
    return max(1, -(-lines * 2 // 55))
