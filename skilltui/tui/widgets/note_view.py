"""One note of the pool, rendered: its description, then its guidance.

A note's front matter is YAML for the linter and the prompts; a person wants the one-line
description as a lead and the body as prose, so the front matter is lifted out here
rather than rendered as a stray horizontal rule.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from ...formats import parse_note


def note_markdown(path: str, text: str) -> str:
    """The markdown shown for a note: path as heading, description as a quote, then the body."""
    if not text:
        return f"### {path}\n\n*(this note is gone: the pool moved on)*\n"
    meta, body, problem = parse_note(text)
    if problem or meta is None:
        return f"### {path}\n\n> ⚠ {problem}\n\n```\n{text}\n```\n"
    description = str(meta.get("description", "")).strip()
    return f"### {path}\n\n> {description}\n\n{body.strip()}\n"


class NoteView(VerticalScroll, can_focus=True):
    """The selected note, or a hint when none is selected."""

    DEFAULT_CSS = """
    NoteView {
        background: $surface;
        padding: 0 1;
    }
    NoteView > Markdown {
        background: $surface;
        margin: 0;
        padding: 0;
    }
    """

    HINT = "*Choose a note in the tree to read it.*"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.path: str | None = None
        self._markdown = self.HINT

    def compose(self) -> ComposeResult:
        yield Markdown(self._markdown, open_links=False)

    def show(self, path: str | None, text: str) -> None:
        """Show note `path` with its file text; `None` goes back to the hint."""
        markdown = self.HINT if path is None else note_markdown(path, text)
        self.path = path
        if markdown == self._markdown:
            return
        self._markdown = markdown
        self.query_one(Markdown).update(markdown)
