"""The pool as a tree: its folders and the notes in them (never `.git`).

The pool is the network's weights; this is the person's map of them. The tree takes the
pool's headers (path and description of every note) as data, rebuilds itself only when
they change, and keeps the person's place and open folders across rebuilds, because it
refreshes after every commit while the person may be reading.

Beside each note, a column of its attribution from the read traces: how many forward
passes read it and the mean loss of the episodes written with it against those written
without it (`3 reads · 0.412 vs 0.455`; lower is better). The tree is as wide as its widest
label (at least MIN_WIDTH, at most half the screen: the main screen's CSS), so on a wide
terminal the column is whole instead of cut at a fixed width.
"""

from __future__ import annotations

from typing import ClassVar, Unpack

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree

from ...shared.widgets import WidgetOptions

MIN_WIDTH = 34  # the width at 80 columns, where the note beside the tree needs the rest
# Beyond a label: two levels of tree guides (4 cells each), the padding and the border.
CHROME = 8 + 2 + 1


class PoolTree(Tree[str]):
    """Folders and notes of the pool; highlighting a note posts `PoolTree.NoteChosen`."""

    # The "awaiting review" mark takes the theme's warning text colour, readable in both themes.
    COMPONENT_CLASSES: ClassVar[set[str]] = Tree.COMPONENT_CLASSES | {"pool-tree--pending"}
    DEFAULT_CSS = """
    PoolTree {
        background: $surface;
        padding: 0 1;
    }
    PoolTree > .pool-tree--pending { color: $text-warning; text-style: bold; }
    """

    BINDINGS = [
        Binding("e", "edit", "Edit note"),
        # `3` gives the tree the keys; j / k move in it as they do in every list of the app.
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    class EditWanted(Message):
        """`e` on a note: the person wants it in their editor; `path` is relative to the pool."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class NoteChosen(Message):
        """A note was highlighted; `path` is relative to the pool."""

        def __init__(self, path: str, description: str) -> None:
            super().__init__()
            self.path = path
            self.description = description

    def __init__(self, notes: list[tuple[str, str]] | None = None, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__("pool", data="", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._notes: list[tuple[str, str]] | None = None
        self._attribution: dict[str, dict] = {}
        self._pending: set[str] = set()
        self._descriptions: dict[str, str] = {}
        self._folded: set[str] = set()
        if notes is not None:
            self.show(notes)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self._pending and self._notes is not None and self.is_mounted:
            # A new theme: the pending marks hold the old theme's colour until they are drawn again.
            notes, self._notes = self._notes, None
            self.call_later(self.show, notes, self._attribution, self._pending)

    @property
    def notes(self) -> list[tuple[str, str]]:
        return list(self._notes or [])

    def show(
        self, notes: list[tuple[str, str]], attribution: dict[str, dict] | None = None, pending: set[str] | None = None
    ) -> None:
        """Show these (path, description) pairs and their attribution; a no-op when nothing changed.

        `pending` are the notes a micro-step that still waits for review added or changed: they
        are in the pool's files but not yet kept, and say so.
        """
        attribution, pending = attribution or {}, pending or set()
        if notes == self._notes and attribution == self._attribution and pending == self._pending:
            return
        self._attribution, self._pending = dict(attribution), set(pending)
        previous = self.cursor_node.data if self.cursor_node is not None else None
        for node in self.root.children:
            if node.data and not node.is_expanded:
                self._folded.add(node.data)
            elif node.data:
                self._folded.discard(node.data)
        self._notes = list(notes)
        self._descriptions = dict(notes)
        self.clear()
        self.root.expand()
        folders: dict[str, list[str]] = {}
        for path, _ in notes:
            folder, _, _ = path.partition("/")
            folders.setdefault(folder, []).append(path)
        target = first = None
        if not folders:
            self.root.add_leaf(Text("(no notes yet)", style="italic dim"), data="")
        width = max((len(path.partition("/")[2]) for path, _ in notes), default=0)
        pending_style = self.get_component_rich_style("pool-tree--pending", partial=True) if pending else None
        for folder in sorted(folders):
            # Tree labels are Rich text, not Content, so folders stand out by weight, not by colour.
            label = Text.assemble((f"{folder}/", "bold"), (f" {len(folders[folder])}", "dim"))
            branch = self.root.add(label, data=f"{folder}/", expand=f"{folder}/" not in self._folded)
            for path in sorted(folders[folder]):
                label = self._label(path.partition("/")[2], width, attribution.get(path))
                if path in pending:
                    label.append("  awaiting review", style=pending_style)
                leaf = branch.add_leaf(label, data=path)
                first = first or leaf
                if path == previous:
                    target = leaf
        widest = max((leaf_label.cell_len for leaf_label in self._leaf_labels()), default=0)
        self.styles.width = max(MIN_WIDTH, widest + CHROME)
        # Keep the person's note; with none chosen yet, open the first so the pane is never blank.
        target = target or (first if previous is None or previous.endswith("/") or not previous else None)
        if target is not None:
            self.call_after_refresh(self.move_cursor, target)

    def _leaf_labels(self) -> list[Text]:
        # A tree keeps its labels as Text (it makes one of a str it is given).
        leaves = [leaf for branch in self.root.children for leaf in branch.children]
        return [label for leaf in leaves if isinstance(label := leaf.label, Text)]

    @staticmethod
    def _label(name: str, width: int, stats: dict | None) -> Text:
        """The note's name, then its attribution column (dim), aligned across the tree."""
        if not stats:
            return Text(name)
        with_ = "-" if stats.get("with") is None else f"{stats['with']:.3f}"
        without = "-" if stats.get("without") is None else f"{stats['without']:.3f}"
        passes = stats.get("passes", 0)
        column = f"{passes} read{'s' if passes != 1 else ''} · {with_} vs {without}"
        return Text.assemble(name.ljust(width + 2), (column, "dim"))

    def action_edit(self) -> None:
        node = self.cursor_node
        path = node.data if node is not None else None
        if path and not path.endswith("/"):
            self.post_message(self.EditWanted(path))
        else:
            self.notify("Choose a note first (a folder is not a note)", timeout=3)

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        event.stop()
        path = event.node.data
        if path and not path.endswith("/"):
            self.post_message(self.NoteChosen(path, self._descriptions.get(path, "")))


def pool_label(notes: list[tuple[str, str]], unreviewed: list[str]) -> str:
    """The Pool tab's title: the notes kept, and apart from them those a waiting review would add."""
    added = [path for path in unreviewed if path in dict(notes)]
    kept = len(notes) - len(added)
    title = f"Pool · {kept} note{'' if kept == 1 else 's'}"
    return title + (f" + {len(added)} awaiting review" if added else "")
