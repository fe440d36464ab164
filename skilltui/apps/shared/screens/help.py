"""`?` in either app: its screens' keys, made from the same table as the bindings and the docs (`keymap`).

Both apps show the same dialog (same frame, same keys to close it) with their own screens'
rows in it, so `?` looks and closes the same in `skilltui train` and `skilltui review`.

One row per key, the key in a fixed column and what it does wrapping beside it, so a
long line stays readable on a narrow terminal. The whole map fits a 120x40 terminal; on a
smaller one (down to 80x24, the smallest supported) it scrolls, and the dialog's last
line says how much is below while there is more: a clipped list must never look complete.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keymap import SCREENS, rows

CLOSED = "esc or ? closes this help"


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        background: $background 60%;
    }
    HelpScreen > Vertical {
        width: 100;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $panel;
    }
    HelpScreen VerticalScroll {
        height: auto;
        max-height: 75vh;  /* with the border and the foot, inside the dialog's 90% */
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    HelpScreen .title { color: $text-primary; text-style: bold; }
    HelpScreen .screen { text-style: bold underline; margin-top: 1; }
    HelpScreen .row { height: auto; }
    HelpScreen .key { width: 19; padding-left: 2; color: $text-accent; text-style: bold; }
    HelpScreen .what { width: 1fr; }
    HelpScreen #help-foot {
        dock: bottom;
        height: 1;
        padding: 0 1;
        color: $foreground-muted;
        background: $panel;
    }
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, title: str, screens: tuple[str, ...], intro: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.screens = screens
        self.intro = intro

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(CLOSED, id="help-foot", markup=False)
            with VerticalScroll(id="help-keys"):
                yield from self.body()

    def body(self) -> ComposeResult:
        """What scrolls inside the frame: the title, the intro, then each screen's keys under its name."""
        yield Static(self.title_text, classes="title", markup=False)
        if self.intro:
            yield Static(self.intro, markup=False)
        for screen in self.screens:
            if len(self.screens) > 1:
                yield Static(SCREENS[screen], classes="screen", markup=False)
            for row in rows(screen):
                with Horizontal(classes="row"):
                    yield Static(row.keys, classes="key", markup=False)
                    yield Static(row.what, classes="what", markup=False)

    def on_mount(self) -> None:
        keys = self.query_one("#help-keys", VerticalScroll)
        keys.focus()
        self.watch(keys, "scroll_y", self._update_foot)
        self.watch(keys, "virtual_size", self._update_foot)
        self.call_after_refresh(self._update_foot)

    def on_resize(self) -> None:
        self.call_after_refresh(self._update_foot)

    def _update_foot(self, *_: object) -> None:
        keys = self.query_one("#help-keys", VerticalScroll)
        more = keys.max_scroll_y - round(keys.scroll_y)
        foot = self.query_one("#help-foot", Static)
        if more > 0:
            foot.update(f"↓ {more} more line{'s' if more != 1 else ''} below (↓ or pgdn) · {CLOSED}")
        else:
            foot.update(CLOSED)

    @property
    def more_below(self) -> bool:
        keys = self.query_one("#help-keys", VerticalScroll)
        return keys.max_scroll_y > round(keys.scroll_y)

    def action_close(self) -> None:
        self.dismiss(None)
