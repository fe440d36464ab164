"""The `/` search box: it searches commit messages and the contents of the notes each commit touched."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class SearchBar(Input):
    """Hidden until `/`; enter searches, escape puts it away and gives the keys back to the list."""

    DEFAULT_CSS = """
    SearchBar {
        display: none;
        dock: bottom;
        margin-bottom: 1;
    }
    SearchBar.-open {
        display: block;
    }
    SearchBar > .input--placeholder {
        color: $foreground-muted;
    }
    """

    BINDINGS = [Binding("escape", "close", "Close search")]

    class Closed(Message):
        """The person put the search box away without searching."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder="messages and note contents; enter to search, esc to close", id=id)
        self.border_title = "search commits /"

    def open(self) -> None:
        self.add_class("-open")
        self.focus()

    def close(self) -> None:
        self.remove_class("-open")

    def action_close(self) -> None:
        self.close()
        self.post_message(self.Closed())
