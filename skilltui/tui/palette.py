"""Command palette entries of the live app beyond Textual's own: pause, resume, theme, copy, review, jump to a work."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.app import SystemCommand
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider

# Textual's own palette entries that a person of this app has no use for: "Keys" opens a
# panel that duplicates `?`, and the screenshot and maximize entries are developer tools.
# "Theme" is replaced by "Switch theme", which offers only this app's themes.
TEXTUAL_ENTRIES_DROPPED = {"Theme", "Keys", "Maximize", "Minimize", "Screenshot"}


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


class OwnThemes(Provider):
    """The themes this app ships and the person's own theme files, not Textual's whole set."""

    def _themes(self) -> list[tuple[str, Callable[[], None]]]:
        app: Any = self.app
        return [(name, partial(setattr, app, "theme", name)) for name in app.own_themes]

    async def discover(self) -> Hits:
        for name, callback in self._themes():
            yield DiscoveryHit(name, callback, help="use this theme (remembered for the next start)")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback in self._themes():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help="use this theme")


def choose_theme(app: Any) -> None:
    app.push_screen(CommandPalette(providers=[OwnThemes], placeholder="Search for themes…"))


def kept_textual_commands(commands: Iterator[SystemCommand]) -> Iterator[SystemCommand]:
    return (c for c in commands if c.title not in TEXTUAL_ENTRIES_DROPPED)


def training_commands(app: Any) -> Iterator[SystemCommand]:
    """The live app's own palette entries, offered when they apply."""
    if app.training and not app.driver.paused:
        yield SystemCommand("Pause after the current stage", "calls in flight finish; p resumes", app.action_pause)
    if app.training and app.driver.paused:
        yield SystemCommand("Resume training", "the next stage starts", app.action_resume)
    yield SystemCommand("Switch theme", "choose among the dark, light and your own themes", partial(choose_theme, app))
    yield SystemCommand("Copy the run folder path", str(app.run_dir), app.action_copy_run_path)
    if app.pending is not None:
        yield SystemCommand("Open the waiting review", "the micro-step waits for you", app.show_review)


def copy_run_path(app: Any) -> None:
    """Ask the terminal to put the run folder's path on the clipboard, and say what was tried.

    OSC 52 is a request; no terminal answers whether it did (tmux drops it unless
    set-clipboard is on), so the notice shows the path to copy by hand as well.
    """
    path = str(app.run_dir)
    app.copy_to_clipboard(path)
    tmux = " tmux passes it on only with `set -g set-clipboard on`." if "TMUX" in os.environ else ""
    app.notify(f"{path}\nSent to the clipboard with OSC 52, if the terminal allows it.{tmux}", timeout=10)
