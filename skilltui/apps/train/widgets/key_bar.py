"""The footer of bindings, drawn as one line of text instead of a widget per key.

Textual's `Footer` composes a widget per key again whenever the active bindings change,
which they do at every focus change and at every review (its `v`, its `a r u`). Each
recompose mounts and styles a dozen widgets, most of what a key such as approve costs before
the screen shows its effect, and keeps every key it replaced alive (in Textual 8.2 each new
key binds to the footer's `compact` reactive and the binding outlives the key). This bar
renders the same facts, key and description of every shown binding of the active screen, in
one `render()`; a click on a key presses it.
"""

from __future__ import annotations

from typing import Unpack

from textual import events
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget

from ...shared.widgets import WidgetOptions

KEY_STYLE = "$footer-key-foreground bold"
DESCRIPTION_STYLE = "$footer-description-foreground"
DISABLED_STYLE = "$footer-description-foreground 50%"


class KeyBar(Widget):
    """The active screen's shown bindings, then the command palette key on the right."""

    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-foreground;
    }
    """

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._spans: list[tuple[int, int, str]] = []
        self._drawn: list[tuple[str, str, str, bool]] | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        # The signal comes at every focus change and twice as a screen comes back on top, mostly
        # with the same keys: a repaint then is a frame of its own, and a key pressed just after
        # waits for Textual's next one.
        if self._keys() != self._drawn:
            self.refresh()

    def _keys(self) -> list[tuple[str, str, str, bool]]:
        """(key as shown, description, key, enabled) of every shown binding but the palette's."""
        app = self.app
        keys: list[tuple[str, str, str, bool]] = []
        seen: set[str] = set()
        palette = app.COMMAND_PALETTE_BINDING if app.ENABLE_COMMAND_PALETTE else None
        for key, active in self.screen.active_bindings.items():
            binding = active.binding
            if not binding.show or binding.action in seen or key == palette:
                continue
            seen.add(binding.action)
            keys.append((app.get_key_display(binding), binding.description, key, active.enabled))
        return keys

    def render(self) -> Content:
        app = self.app
        keys = self._drawn = self._keys()
        palette = app.COMMAND_PALETTE_BINDING if app.ENABLE_COMMAND_PALETTE else None
        right = Content.styled("") if palette is None else Content.assemble(("▏^p ", KEY_STYLE), ("palette ", ""))
        room = max(0, self.size.width - right.cell_length)
        left, self._spans = self._fit(keys, room)
        if palette is not None:
            self._spans.append((room, room + right.cell_length, palette))
        return Content.assemble(left.truncate(room, pad=True), right)

    @staticmethod
    def _fit(keys: list[tuple[str, str, str, bool]], room: int) -> tuple[Content, list[tuple[int, int, str]]]:
        """The keys that fit `room`, whole: with less space between them first, then the last ones left out.

        A key cut in the middle ("p Pa…") says nothing; the screen's own keys come first in
        its bindings, and `?` lists every key, so the ones dropped at the end are not lost.
        """

        def width(items: list[tuple[str, str, str, bool]]) -> int:
            return sum(len(shown) + len(label) for shown, label, _, _ in items)

        for pad in (" ", ""):
            items = [(f"{pad}{shown} ", f"{what} ", key, enabled) for shown, what, key, enabled in keys]
            if width(items) <= room:
                break
        while items and width(items) > room:
            items.pop()
        parts: list[tuple[str, str]] = []
        spans: list[tuple[int, int, str]] = []
        position = 0
        for shown, label, key, enabled in items:
            style = KEY_STYLE if enabled else DISABLED_STYLE
            parts += [(shown, style), (label, DESCRIPTION_STYLE if enabled else DISABLED_STYLE)]
            spans.append((position, position + len(shown) + len(label), key))
            position += len(shown) + len(label)
        return Content.assemble(*parts), spans

    async def _on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                event.stop()
                self.app.simulate_key(key)
                return
