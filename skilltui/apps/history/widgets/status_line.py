"""One line that says what the last action did or why it was refused; it stays until the next one."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static


class StatusLine(Static):
    """The answer to the last key that did something: a toast vanishes, a refusal's reason should not."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
    }
    StatusLine.-error {
        color: $text-error;
        text-style: bold;
    }
    StatusLine.-ok {
        color: $text-success;
    }
    """

    message: reactive[str] = reactive("", layout=False)

    def say(self, message: str, *, error: bool = False) -> None:
        self.message = message
        self.set_class(error, "-error")
        self.set_class(not error and bool(message), "-ok")

    def watch_message(self, message: str) -> None:
        self.update(Text(message))
