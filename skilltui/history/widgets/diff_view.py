"""A patch shown one note at a time, as lazygit and tig do: a file header, then its coloured hunks."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static


@dataclass(frozen=True)
class FileDiff:
    """The part of a patch that touches one file."""

    path: str
    status: str  # added, removed, changed
    text: str

    @property
    def added(self) -> int:
        return sum(1 for line in self.text.splitlines() if line.startswith("+") and not line.startswith("+++"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.text.splitlines() if line.startswith("-") and not line.startswith("---"))


def split_patch(patch: str) -> list[FileDiff]:
    """A `git diff` output cut at each `diff --git` line into one FileDiff per file."""
    files: list[FileDiff] = []
    chunks: list[list[str]] = []
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            chunks.append([])
        if chunks:
            chunks[-1].append(line)
    for lines in chunks:
        header = lines[0].split(" b/", 1)
        path = header[1] if len(header) == 2 else lines[0].removeprefix("diff --git ")
        status = "changed"
        if any(line.startswith("new file mode") for line in lines[1:5]):
            status = "added"
        elif any(line.startswith("deleted file mode") for line in lines[1:5]):
            status = "removed"
        files.append(FileDiff(path, status, "\n".join(lines)))
    return files


def render_diff(text: str) -> Text:
    out = Text()
    for line in text.splitlines():
        if line.startswith(("+++", "---", "diff --git", "index ", "new file", "deleted file")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        out.append(line + "\n", style=style)
    return out


class DiffView(VerticalScroll):
    """One file of a patch at a time; `show_file` moves between files and the header says where you are."""

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        border: round $primary;
        padding: 0 1;
    }
    DiffView > #diff-file {
        text-style: bold;
        color: $accent;
        margin-bottom: 1;
    }
    """

    def __init__(self, patch: str, empty: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.files = split_patch(patch)
        self.empty = empty
        self.index = 0

    def compose(self):
        yield Static(id="diff-file")
        yield Static(id="diff-body")

    def on_mount(self) -> None:
        self.show_file(0)

    def show_file(self, index: int) -> None:
        header = self.query_one("#diff-file", Static)
        body = self.query_one("#diff-body", Static)
        if not self.files:
            header.update(Text(self.empty))
            body.update("")
            return
        self.index = index % len(self.files)
        current = self.files[self.index]
        header.update(
            Text(
                f"file {self.index + 1}/{len(self.files)}: {current.path} ({current.status}, "
                f"+{current.added} -{current.removed})"
            )
        )
        body.update(render_diff(current.text))
        self.scroll_home(animate=False)
