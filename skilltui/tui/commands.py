"""Command palette entries of the live app beyond Textual's own: "Jump to work NAME", one per work."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider


class WorkCommands(Provider):
    """Command palette entries "Jump to work NAME", one per work of the run."""

    def _commands(self) -> list[tuple[str, Callable[[], None]]]:
        app: Any = self.app
        if not hasattr(app, "main"):
            return []
        return [(f"Jump to work {name}", partial(app.main.jump_to_work, name)) for name in app.view.works]

    async def discover(self) -> Hits:
        for text, callback in self._commands():
            yield DiscoveryHit(text, callback, help="show this work's output, loss report and curve")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, callback in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), callback, help="show this work's output, report and curve")
