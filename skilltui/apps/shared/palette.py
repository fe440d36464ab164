"""Palette entries both apps share: their own themes instead of Textual's set, and Textual's entries they keep.

The live app and `skilltui review` offer the same theme picker (the shipped dark and light
themes and the person's own theme files: the themes `t` and the settings know), and both
leave out Textual's developer entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from textual.app import SystemCommand
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider

# Textual's own palette entries that a person of this app has no use for: "Keys" opens a
# panel that duplicates `?`, and the screenshot and maximize entries are developer tools.
# "Theme" is replaced by "Switch theme", which offers only this app's themes.
TEXTUAL_ENTRIES_DROPPED = {"Theme", "Keys", "Maximize", "Minimize", "Screenshot"}


class EntriesProvider(Provider):
    """A palette list of (text, action) entries: shown whole when the palette opens, matched as one types.

    Subclasses say what the entries are (`entries`) and the help line each kind of hit shows.
    """

    discover_help = ""
    search_help = ""

    def entries(self) -> list[tuple[str, Callable[[], None]]]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for text, callback in self.entries():
            yield DiscoveryHit(text, callback, help=self.discover_help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, callback in self.entries():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), callback, help=self.search_help)


class OwnThemes(EntriesProvider):
    """The themes this app ships and the person's own theme files, not Textual's whole set."""

    discover_help = "use this theme (remembered for the next start)"
    search_help = "use this theme"

    def entries(self) -> list[tuple[str, Callable[[], None]]]:
        app: Any = self.app
        return [(name, partial(setattr, app, "theme", name)) for name in app.own_themes]


def choose_theme(app: Any) -> None:
    app.push_screen(CommandPalette(providers=[OwnThemes], placeholder="Search for themes…"))


def kept_textual_commands(commands: Iterable[SystemCommand]) -> Iterator[SystemCommand]:
    return (c for c in commands if c.title not in TEXTUAL_ENTRIES_DROPPED)
