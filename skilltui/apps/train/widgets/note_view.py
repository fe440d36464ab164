"""One note of the pool, rendered: its description, then its guidance.

A note's front matter is YAML for the linter and the prompts; a person wants the one-line
description as a lead and the body as prose, so the front matter is lifted out here
rather than rendered as a stray horizontal rule. The note is drawn the way a loss report is
(a `ReportView`: Rich's markdown in one scrolling pane), so the Pool and Report panes read
alike and share one way of showing text that only redraws when it changed.
"""

from __future__ import annotations

from typing import Unpack

from ....core.formats import parse_note
from ...shared.widgets import WidgetOptions
from ...shared.widgets.report_view import ReportView


def note_markdown(path: str, text: str) -> str:
    """The markdown shown for a note: path as heading, description as a quote, then the body."""
    if not text:
        return f"### {path}\n\n*(this note is gone: the pool moved on)*\n"
    meta, body, problem = parse_note(text)
    if problem or meta is None:
        return f"### {path}\n\n> ⚠ {problem}\n\n```\n{text}\n```\n"
    description = str(meta.get("description", "")).strip()
    return f"### {path}\n\n> {description}\n\n{body.strip()}\n"


class NoteView(ReportView):
    """The selected note, or a hint when none is selected; drawn the way a loss report is."""

    HINT = "*Choose a note in the tree to read it.*"

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(self.HINT, **kwargs)
        self.path: str | None = None

    def show_note(self, path: str | None, text: str) -> None:
        """Show note `path` with its file text; `None` goes back to the hint."""
        self.path = path
        self.show(self.HINT if path is None else note_markdown(path, text))
