"""What `skilltui import` found in each file: said before training pays for what it lost.

A converter that drops a page of dialogue or keeps a running header as action shows up
only as a strange loss steps later. So each imported file gets a report: its scenes,
characters and lines of dialogue as the loss will read them (counted by screenplain on the
Fountain written, the parser the loss uses), its pages, every artefact removed by kind, and
every line the layout classifier could not place, with its page and text, for the person
to check. `--json` prints the same records.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from screenplain.parsers import fountain
from screenplain.types import Dialog, DualDialog, Slug

from ..core.words import counted


@dataclass
class FileReport:
    source: str
    episode: int
    written: str
    format: str
    pages: int
    scenes: int = 0
    characters: list[str] = field(default_factory=list)
    dialogue_lines: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    # (page, text); the page is None where the format has none (an FDX paragraph Final Draft never paginated).
    unclassified: list[tuple[int | None, str]] = field(default_factory=list)
    title: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "episode": self.episode,
            "written": self.written,
            "format": self.format,
            "title": self.title,
            "pages": self.pages,
            "scenes": self.scenes,
            "characters": self.characters,
            "dialogue_lines": self.dialogue_lines,
            "removed": self.removed,
            "unclassified": [{"page": page, "text": text} for page, text in self.unclassified],
        }

    def lines(self) -> list[str]:
        """The report as a person reads it: one summary line, what was removed, each line not placed."""
        head = (
            f"{self.source} -> {self.written}: {counted(self.pages, 'page')}, {counted(self.scenes, 'scene')}, "
            f"{counted(len(self.characters), 'character')}, {counted(self.dialogue_lines, 'line')} of dialogue"
        )
        out = [head]
        if self.removed:
            parts = ", ".join(f"{kind} x{n}" for kind, n in sorted(self.removed.items()))
            out.append(f"  removed: {parts}")
        for page, text in self.unclassified:
            where = f"page {page}" if page else "no page"
            out.append(f"  unclassified ({where}): {text}")
        return out


def counts(text: str) -> tuple[int, list[str], int]:
    """Scenes, the characters who speak, and lines of dialogue, as screenplain reads the Fountain."""
    scenes, dialogue = 0, 0
    speakers: dict[str, None] = {}
    for element in fountain.parse(io.StringIO(text)):
        if isinstance(element, Slug):
            scenes += 1
            continue
        dialogs = [element.left, element.right] if isinstance(element, DualDialog) else [element]
        for dialog in dialogs:
            if isinstance(dialog, Dialog):
                speakers.setdefault(str(dialog.character).split("(")[0].strip().lstrip("@").upper(), None)
                dialogue += sum(1 for parenthetical, _ in dialog.blocks if not parenthetical)
    return scenes, list(speakers), dialogue
