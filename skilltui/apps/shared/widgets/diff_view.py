"""A pool commit's patch, file by file, coloured by the theme.

Every update to the pool is one commit, so this is where a person reads what a backward
micro-step did to the "weights". The widget takes patch text (git's unified diff, split
into files by `pool.repo.split_patch`) and nothing else, so the live app, the review
screen and `skilltui review` all use it the same way.

Colours are theme variables ($text-success, $text-error, ...) resolved when the widget
renders, so the diff stays readable in every theme and follows a theme switch at once.
"""

from __future__ import annotations

from typing import Unpack

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from ....pool.repo import FilePatch, split_patch
from . import WidgetOptions

MAX_LINES_PER_FILE = 1500

STYLES = {
    "+": "$text-success on $success-muted 40%",
    "-": "$text-error on $error-muted 40%",
    "@": "$text-secondary",
    " ": "",
    "\\": "$foreground-muted italic",
}


def render_file(file: FilePatch, width: int | None = None) -> Content:
    """One file's lines as styled content; a very long file is cut with a line saying so.

    With `width`, a line too long for it is wrapped under its text with the sign's column
    left blank: wrapped at column 0, a continuation that begins with `-` or `+` (a list in
    a note) read as a removed or an added line of its own.
    """
    lines = file.lines[:MAX_LINES_PER_FILE]
    parts: list[Content] = []
    for line in lines:
        style = STYLES.get(line[:1], "")
        for row in _rows(line or " ", width):
            parts.append(Content.styled(row.plain, style) if style else row)
    if len(file.lines) > MAX_LINES_PER_FILE:
        parts.append(Content.styled(f"… {len(file.lines) - MAX_LINES_PER_FILE} more lines", "$foreground-muted italic"))
    if not parts:
        parts.append(Content.styled("(no content change)", "$foreground-muted italic"))
    return Content("\n").join(parts)


def _rows(line: str, width: int | None) -> list[Content]:
    """`line` as the rows it takes at `width`: the first with its sign, the rest one column in."""
    if width is None or width < 3 or len(line) <= width:
        return [Content(line)]
    sign, body = line[:1], Content(line[1:])
    return [Content(sign if n == 0 else " ") + chunk for n, chunk in enumerate(body.wrap(width - 1))]


class DiffFile(Static):
    """One file's block, its lines wrapped at the block's width (see `render_file`)."""

    def __init__(self, file: FilePatch, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(render_file(file), markup=False, **kwargs)
        self.file = file
        self._width: int | None = None

    def on_resize(self) -> None:
        width = self.content_size.width
        if width and width != self._width:
            self._width = width
            self.update(render_file(self.file, width))


class DiffView(VerticalScroll, can_focus=True):
    """Show `patch` (unified diff text) as one bordered block per file."""

    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        padding: 0 1;
    }
    DiffView > .diff-file {
        border: round $panel-lighten-2;
        border-title-color: $text-primary;
        border-title-style: bold;
        padding: 0 1;
        margin-bottom: 1;
        width: 1fr;
    }
    DiffView > .diff-file.-added { border-title-color: $text-success; }
    DiffView > .diff-file.-removed { border-title-color: $text-error; }
    DiffView > .diff-empty {
        color: $text-muted;
        padding: 1 0;
    }
    """

    patch: reactive[str] = reactive("", recompose=True)
    empty_text: reactive[str] = reactive("no commit selected", recompose=True)

    def __init__(
        self, patch: str = "", *, empty_text: str = "no commit selected", **kwargs: Unpack[WidgetOptions]
    ) -> None:
        super().__init__(**kwargs)
        self.set_reactive(DiffView.patch, patch)
        self.set_reactive(DiffView.empty_text, empty_text)

    @property
    def files(self) -> list[FilePatch]:
        return split_patch(self.patch)

    def compose(self) -> ComposeResult:
        files = split_patch(self.patch)
        if not files:
            yield Static(self.empty_text, classes="diff-empty", markup=False)
            return
        for file in files:
            block = DiffFile(file, classes=f"diff-file -{file.status}")
            block.border_title = file.title
            yield block
