"""The footer of bindings, without the memory it leaks in Textual 8.2.

Textual's `Footer` composes itself again whenever the active bindings change, and binds
every new `FooterKey` to its own `compact` reactive. The binding of each key it threw
away stays in the footer's watcher list until `compact` changes, which it never does,
so the old keys (and everything they render) are never freed. The app changes bindings
at every review, so over a long run that is megabytes per step. This footer drops the
bindings of keys that are gone after each recompose.
"""

from __future__ import annotations

from textual.widgets import Footer


class AppFooter(Footer):
    async def recompose(self) -> None:
        await super().recompose()
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers if node.is_attached]
