"""The one shape every reader turns a script into, and how it is written as a work's episode.

Training reads Fountain (human/NN.fountain is the target the loss compares with), so each
importer (fdx.py, pdf.py, text.py) reads its format into a list of `Element`s — a scene
heading, action, a cue, a parenthetical, a line of dialogue, a transition — and this module
writes them as Fountain that screenplay parsers (screenplain, which the loss uses) read back
as the same elements: text that would be read as something else is forced (`.`, `!`, `@`,
`>`), so an action line in capitals stays action.

Fountain given as Fountain is only normalised: a byte order mark, CRLF line ends and tabs
are what editors on other systems leave, and none of them is part of the script. Nor is a
control character (NUL, ESC, BEL and the rest of C0 and C1 but tab and newline), whatever
the format: left in an episode it reaches every prompt and terminal that shows the episode,
so every import drops them and its report counts them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("heading", "action", "character", "parenthetical", "dialogue", "transition", "centered")
HEADING = re.compile(r"^(INT|EXT|EST|INT\.?/EXT|I/E)[ .]", re.IGNORECASE)
# C0 but tab and newline, DEL, and C1: no script holds one; a terminal may act on it.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_FORCED = ("!", "@", "~", "=", "#", ">", ".", "[[", "/*")


@dataclass
class Element:
    """One paragraph of a screenplay, by its kind; `dual` marks the second cue of dual dialogue."""

    kind: str
    text: str
    dual: bool = False


@dataclass
class Script:
    """A read script: its elements, the title its title page gives (if any), and its page count."""

    elements: list[Element]
    title: str | None = None
    pages: int = 1


def normalise(text: str) -> str:
    """Fountain as a work keeps it: no byte order mark, LF line ends, tabs as spaces, one final newline."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.expandtabs(4).rstrip() for line in text.split("\n"))
    return text.strip("\n") + "\n"


def without_controls(text: str, keep: str = "") -> tuple[str, int]:
    """`text` without its control characters (those in `keep` aside), and how many went."""
    if CONTROL.search(text) is None:
        return text, 0
    count = 0

    def drop(match: re.Match[str]) -> str:
        nonlocal count
        if match.group() in keep:
            return match.group()
        count += 1
        return ""

    return CONTROL.sub(drop, text), count


def title_of_fountain(text: str) -> str | None:
    """The Title: key of a Fountain title page, when the script opens with one."""
    for line in text.split("\n"):
        if not line.strip():
            return None
        key, sep, value = line.partition(":")
        if not sep:
            return None
        if key.strip().lower() == "title" and value.strip():
            return value.strip()
    return None


def to_fountain(elements: list[Element]) -> str:
    """Write elements as Fountain: one paragraph each, a cue and its lines kept together."""
    blocks: list[list[str]] = []
    for element in elements:
        text = " ".join(element.text.split())
        if not text:
            continue
        if element.kind in ("parenthetical", "dialogue") and blocks and blocks[-1][0] == "dialogue":
            blocks[-1].append(_spoken(element.kind, text))
        elif element.kind in ("parenthetical", "dialogue"):
            # A line with no cue before it (a cue lost in the source) is kept as action, not dropped.
            blocks.append(["action", _action(text)])
        elif element.kind == "character":
            blocks.append(["dialogue", _cue(text, element.dual)])
        else:
            blocks.append([element.kind, _WRITERS[element.kind](text)])
    # A cue with no line under it is not dialogue in Fountain; it is written as action.
    paragraphs = ["\n".join(b[1:]) if b[0] != "dialogue" or len(b) > 2 else _action(b[1].lstrip("@")) for b in blocks]
    return "\n\n".join(paragraphs) + "\n"


def _spoken(kind: str, text: str) -> str:
    if kind == "parenthetical":
        # Final Draft keeps a parenthetical's brackets in its text; a reader that lost them gets them back.
        return text if text.startswith("(") else f"({text.strip('()')})"
    return text


def _heading(text: str) -> str:
    return text if HEADING.match(text) else f".{text}"


def _action(text: str) -> str:
    upper = text.upper() == text
    looks_else = HEADING.match(text) or (upper and text.endswith("TO:")) or text.startswith(_FORCED)
    return f"!{text}" if looks_else or _centered_like(text) else text


def _centered_like(text: str) -> bool:
    return text.startswith(">") and text.endswith("<")


def _cue(text: str, dual: bool) -> str:
    name = text.partition("(")[0]
    # A cue with a lower-case letter (McCLANE) is not read as a cue unless forced with @.
    cue = text if name.upper() == name and name.strip() else f"@{text}"
    return f"{cue} ^" if dual else cue


def _transition(text: str) -> str:
    return text if text.upper() == text and text.endswith("TO:") else f"> {text.upper()}"


def _centered(text: str) -> str:
    return f"> {text} <"


_WRITERS = {
    "heading": _heading,
    "action": _action,
    "transition": _transition,
    "centered": _centered,
}
